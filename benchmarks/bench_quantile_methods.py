"""Which private quantile for the ranges: exponential mechanism, permute-and-flip or binary search?

The measurement behind ``skdpol.preprocessing.PrivateRangeEstimator``'s
method. One quantile (q = 0.01 and q = 0.99) of n = 30,000 generated values
(normal(40, 10), lognormal(10, 1), integers -2..8 -- point masses), on the
grid of ``bins`` cells over [-1e9, 1e9] through ``signed_log1p``, at epsilon
0.01, 0.05 and 0.25 for the one quantile. Error: the distance, in rows, from
the target rank floor(q n) to the ranks the chosen cell covers (0 = the cell
holds the quantile), as a share of n; median and 90th percentile over runs.

* exponential mechanism (EM): ``skdpol.mechanisms.exponential_mechanism``,
  the exact sampler, on the cell utility (sensitivity 1);
* permute-and-flip (McKenna & Sheldon 2020; epsilon-DP, never worse than the
  EM in expectation): the same utility, simulated in floating point (utility
  only: not a private implementation);
* noisy binary search: log2(bins) steps, each a count #{x <= edge} with
  Laplace noise of scale log2(bins) / epsilon (basic composition), in
  floating point (utility only).

Grid sizes 2^10 and 2^16 for the EM: its error grows with ln(bins) only,
so the finer grid (0.06% cells on the log scale, what latitudes and years
need) costs little.

    python benchmarks/bench_quantile_methods.py     # writes docs/benchmarks/quantile_methods.md
    python benchmarks/bench_quantile_methods.py --quick --out /tmp/q.md
"""

import math

from _common import command_line, machine_lines, md_table, parse_report_args, write_report

import numpy as np  # noqa: E402

from skdpol.mechanisms import exponential_mechanism, quantile_distances, target_rank  # noqa: E402

READING = """\
Reading. The binary search is 3-7 times less accurate than the EM wherever
either resolves the quantile (epsilon 0.25: 0.0009-0.0013 of n against
0.0002), as its budget is split over 16 steps. Permute-and-flip is
indistinguishable from the EM here, and the EM has the tighter composition
(epsilon-bounded range, (epsilon^2 / 8)-zCDP), so the ranges use the EM.
At epsilon 0.01 nothing resolves a 1% quantile of 30,000 rows (about 300
rows against a rank error of 2 ln(bins) / epsilon, over 2,000 rows): the
estimator's adaptive rule moves such quantiles inwards. The grid of 2^10
cells misses less than 2^16 at epsilon 0.05 (fewer empty cells compete with
the quantile's), most on point masses; 2^16 is kept as the default for its
resolution (0.06% cells: years, latitudes), and ``bins`` is the knob for
columns of magnitude-relative spread (money) when the budget is tight."""

N = 30_000
EPSILONS = (0.01, 0.05, 0.25)


def permute_and_flip(d, eps, rng):
    p = np.exp(-eps / 2.0 * (d - d.min()))
    order = rng.permutation(d.size)
    return int(order[np.argmax(rng.random(d.size) < p[order])])


def binary_search(values, edges, r, eps, rng):
    steps = math.ceil(math.log2(edges.size - 1))
    lo, hi = 0, edges.size - 1  # the answer edge lies in (lo, hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        noisy = np.searchsorted(values, edges[mid], side="right") + rng.laplace(0, steps / eps)
        lo, hi = (mid, hi) if noisy < r else (lo, mid)
    return hi - 1  # the cell below the edge found


def main():
    args = parse_report_args(__doc__)
    runs = 20 if args.quick else 200
    rng = np.random.default_rng(0)
    data = {"normal": rng.normal(40, 10, N), "lognormal": rng.lognormal(10, 1, N),
            "integers": rng.integers(-2, 9, N).astype(float)}
    rows = []
    for name, x in data.items():
        values = np.sort(np.sign(x) * np.log1p(np.abs(x)))
        for q in (0.01, 0.99):
            r = target_rank(q, N)
            for eps in EPSILONS:
                cells = {}
                for bins in (2**10, 2**16):
                    edges = np.linspace(-math.log1p(1e9), math.log1p(1e9), bins + 1)
                    d = quantile_distances(values, edges, r)
                    methods = {f"EM, 2^{int(math.log2(bins))}":
                               lambda: exponential_mechanism(d, eps, rng)}
                    if bins == 2**16:
                        methods["permute-and-flip, 2^16"] = lambda: permute_and_flip(d, eps, rng)
                        methods["binary search, 2^16"] = lambda: binary_search(
                            values, edges, r, eps, rng)
                    for label, draw in methods.items():
                        err = np.array([d[draw()] for _ in range(runs)]) / N
                        cells[label] = f"{np.median(err):.4f} / {np.quantile(err, 0.9):.4f}"
                rows.append([name, q, eps, *cells.values()])
                print(rows[-1], flush=True)
    header = ["data", "q", "epsilon", *cells.keys()]
    text = "\n".join([
        "# Private quantiles: which method", "",
        __doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0], "",
        "Cells: rank error as a share of n, median / 90th percentile; 0.0100 is a miss "
        "(the cell lies in the empty part of the search interval, whose distance is "
        "q n, or (1 - q) n).", "",
        md_table(header, rows), "", READING, "",
        f"- {runs} runs per cell; command: `{command_line('bench_quantile_methods.py')}`",
        *machine_lines(), ""])
    write_report(text, args, "quantile_methods.md")


if __name__ == "__main__":
    main()
