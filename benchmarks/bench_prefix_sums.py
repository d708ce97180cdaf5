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
from skdpol.mechanisms._blt import optimal_blt, sqrt_factorization_errors, tree_errors


def _blt_errors(blt, n):
    sens = blt.sensitivity(n)
    return sens * blt.max_error(n), sens * blt.rms_error(n)


def _fmt(pair):
    return f"{pair[0]:.2f} / {pair[1]:.2f}"


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
        "## The stream, simulated",
        "",
        f"`BLTPrefixSum` at n = {n:,}, dim = {dim} (one Python step per leaf): "
        + "; ".join(simulated) + ". The grid path's figure is for the noise multiplier "
        "against the inflated sensitivity (at most 2^-8 above). Memory: 2 x buffers "
        "vectors of dim (8 at 4 buffers) against one cached node per level for the "
        "tree (20 at 10^6 steps).",
        "",
        "The estimators still use the tree: wiring the BLT in as their default is the "
        "next step of issue 15.",
        "",
    ])
    write_report(text, args, "prefix_sums.md")


if __name__ == "__main__":
    main()
