"""Continual release of prefix sums: the binary tree against matrix factorisations.

Error of the released prefix sums in units of (leaf sensitivity x noise
multiplier), one participation per row, for n in {1e4, 1e5, 1e6} steps:
the largest std over t = 1..n ("max") and the root mean square over t
("RMSE"). Rows:

- binary tree (``PrivatePrefixSum``, a known horizon: ceil(log2 n) + 1
  levels, a leaf in one node per level, one node per set bit of t);
- sqrt factorisation C = A^1/2 (the best Toeplitz factorisation within ~5%);
- BLT (``skdpol.mechanisms.BLTPrefixSum``), 4 and 5 buffers, optimised for
  the RMSE at n (``optimal_blt``), with the time the optimisation takes;
- a BLT designed for one horizon and run for another (the ``horizon=None``
  question of issue 15);
- open-ended streams (``horizon=None``): the tree without a horizon (level h
  at noise weight (h + 1)(h + 2), so that one leaf's levels sum to one
  node), against BLT epochs of 2^20, 2^21, ... leaves
  (``OpenBLTPrefixSum``, the estimators' default), each epoch noised for its
  own sensitivity, finished epochs adding their final error in quadrature;
- the BLT stream itself, simulated (``BLTPrefixSum`` at n = 1e4, 200
  coordinates as independent runs): measured RMSE against the closed form.

Memory per step: the tree keeps one cached node per level (log2 n vectors);
a BLT keeps 2 x buffers vectors (its encoder and decoder).

    python benchmarks/bench_prefix_sums.py            # writes docs/benchmarks/prefix_sums.md
    python benchmarks/bench_prefix_sums.py --quick --out /tmp/p.md
"""

import time

import numpy as np
from _common import command_line, machine_lines, md_table, parse_report_args, write_report

from skdpol.mechanisms import BLTPrefixSum
from skdpol.mechanisms._blt import (
    FIRST_EPOCH,
    blt_for_horizon,
    optimal_blt,
    sqrt_factorization_errors,
    tree_errors,
)


def _blt_errors(blt, n):
    sens = blt.sensitivity(n)
    return sens * blt.max_error(n), sens * blt.rms_error(n)


def _fmt(pair):
    return f"{pair[0]:.2f} / {pair[1]:.2f}"


def open_tree_variance(n):
    """Per-t noise variance of the open-ended tree: level h (bit h of t) has
    variance (h + 1)(h + 2) in units of sensitivity x multiplier."""
    t = np.arange(1, n + 1)
    var = np.zeros(n)
    for h in range(int(n).bit_length()):
        var += ((t >> h) & 1) * (h + 1) * (h + 2)
    return var


def open_blt_variance(n):
    """Per-t noise variance of BLT epochs of FIRST_EPOCH, 2 FIRST_EPOCH, ..."""
    var, start, length, finished = np.zeros(n), 0, FIRST_EPOCH, 0.0
    while start < n:
        blt = blt_for_horizon(length)
        steps = min(length, n - start)
        b = np.cumsum(blt.inverse_coefficients(steps))  # B = A C^-1's first column
        own = np.cumsum(b**2) * blt.sensitivity(length) ** 2
        var[start:start + steps] = finished + own
        finished += own[-1] if steps == length else 0.0
        start, length = start + steps, 2 * length
    return var


def main():
    args = parse_report_args(__doc__)
    horizons = (10**4, 10**5) if args.quick else (10**4, 10**5, 10**6)
    rows, design = [], {}
    for n in horizons:
        tree, root = tree_errors(n), sqrt_factorization_errors(n)
        cells = [f"{n:.0e}", _fmt(tree), _fmt(root)]
        for buffers in (4, 5):
            optimal_blt.cache_clear()
            start = time.perf_counter()
            blt = optimal_blt(n, buffers)
            seconds = time.perf_counter() - start
            design[(n, buffers)] = blt
            err = _blt_errors(blt, n)
            cells.append(f"{_fmt(err)} ({err[1] / root[1]:.3f}x sqrt; {seconds:.1f} s)")
        cells.append(f"{tree[1] / _blt_errors(design[(n, 4)], n)[1]:.2f}x")
        rows.append(cells)
    table = md_table(["steps n", "binary tree", "sqrt factorisation",
                      "BLT, 4 buffers (RMSE vs sqrt; optimisation)", "BLT, 5 buffers",
                      "tree RMSE / BLT-4 RMSE"], rows)

    cross = []
    for designed in horizons:
        cells = [f"{designed:.0e}"]
        for run in horizons:
            blt = design[(designed, 4)]
            err = _blt_errors(blt, run)[1]
            own = _blt_errors(design[(run, 4)], run)[1]
            cells.append(f"{err:.2f} ({err / own:.2f}x)")
        cross.append(cells)
    cross_table = md_table(["designed for \\ run for", *(f"{n:.0e}" for n in horizons)], cross)

    open_rows = []
    runs = (10**3, 10**4, 10**5) if args.quick else (10**3, 10**4, 10**5, 10**6, 4 * 10**6)
    longest_tree, longest_blt = open_tree_variance(runs[-1]), open_blt_variance(runs[-1])
    for n in runs:
        tree, blt = longest_tree[:n], longest_blt[:n]
        known = _blt_errors(blt_for_horizon(n), n)
        cells = [f"{n:.0e}", f"{np.sqrt(tree[-1]):.2f} / {np.sqrt(tree.mean()):.2f}",
                 f"{np.sqrt(blt[-1]):.2f} / {np.sqrt(blt.mean()):.2f}",
                 f"{np.sqrt(tree.mean() / blt.mean()):.2f}x",
                 f"{np.sqrt(blt.mean()) / known[1]:.2f}x"]
        open_rows.append(cells)
    open_table = md_table(["run for n", "tree, horizon=None (last / RMSE)",
                           f"BLT epochs from 2^{FIRST_EPOCH.bit_length() - 1} (last / RMSE)",
                           "tree RMSE / BLT epochs RMSE",
                           "BLT epochs RMSE / BLT designed for n"], open_rows)

    n, dim = 10**4, 200
    simulated = []
    for sampler in ("discrete", "float"):
        stream = BLTPrefixSum(dim=dim, sensitivity=1.0, noise_multiplier=1.0, horizon=n,
                              rng=np.random.default_rng(0), sampler=sampler)
        start = time.perf_counter()
        noise = stream.prefix_releases(np.zeros((n, dim)))
        per_step = (time.perf_counter() - start) / n
        measured = float(np.sqrt(np.mean(noise[1:] ** 2)))  # after 1..n-1 leaves
        predicted = stream.noise_std * stream.blt.rms_error(n - 1)
        simulated.append(f"`sampler={sampler!r}`: measured RMSE {measured:.3f} against "
                         f"{predicted:.3f} from the closed form, {per_step * 1e6:.0f} "
                         "microseconds per step")
    text = "\n".join([
        "# Continual release: binary tree, sqrt factorisation and BLT",
        "",
        f"Measured by `{command_line('bench_prefix_sums.py')}`; the set-up is in its "
        "docstring.",
        "",
        *machine_lines(),
        "",
        "Error of the released prefix sums, units of sensitivity x noise multiplier, "
        "one participation per row: max std over t / RMSE over t.",
        "",
        table,
        "",
        "## A BLT run for another horizon than its design (RMSE; ratio to the BLT "
        "designed for the run's horizon)",
        "",
        cross_table,
        "",
        "## Open-ended streams (`horizon=None`)",
        "",
        "Error of the prefix sum after the last leaf and RMSE over t = 1..n (exact, from "
        "the factors). The last column is the price of not knowing the horizon.",
        "",
        open_table,
        "",
        "## The stream, simulated",
        "",
        f"`BLTPrefixSum` at n = {n:,}, dim = {dim} (one Python step per leaf): "
        + "; ".join(simulated) + ". The grid path's figure is for the noise multiplier "
        "against the inflated sensitivity (at most 2^-8 above). Memory: 2 x buffers "
        "vectors of dim (8 at 4 buffers) against one cached node per level for the "
        "tree (20 at 10^6 steps).",
        "",
        "The estimators' `mechanism=\"auto\"` default uses the BLT whenever delta > 0 "
        "(`BLTPrefixSum` for a known horizon, the epochs above without one).",
        "",
    ])
    write_report(text, args, "prefix_sums.md")


if __name__ == "__main__":
    main()
