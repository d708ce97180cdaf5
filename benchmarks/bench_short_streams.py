"""Short known-horizon streams of the regressor's default ``"ftrl-momentum"``.

Under ``NOISE_MIN_ROUNDS`` = 40 planned rounds the step's noise rule
(:func:`skdpol.online._step_noise.noise_step_scale`) was off, and at d = 20-50
over 300-1,000 rows (6-20 rounds of 50) one pass published models far below
the zero model (R^2 -2.8 at d = 20, 1,000 rows, epsilon 0.5). This script
compares step rules for those short streams on a grid of widths, horizons and
epsilons (one pass in chunks of 100, ``horizon`` = the rows, delta 1e-6, R^2
on 5,000 fresh rows) and on two kinds of generated rows:

* ``wide-y``: N(0, I) rows, an intercept 1 and label noise 0.5, data_norm
  2.5 sqrt(d), y_bound 3 ||w||_1 + 1 (``bench_open_horizon.py``'s rows: a
  loose label bound, so the signal is ~0.4 / sqrt(d) of it);
* ``unit``: N(0, I / d) rows, no intercept, label noise 0.1, bounds from the
  generating distribution (``bench_speed_memory.py``'s rows: the signal is
  ~1 / 5 of the label bound at every d).

Variants (``--variants``) replace the step's scale of streams of fewer than
40 planned rounds only (longer streams keep the shipped rule, unchanged):

* ``before``: scale 1 under 40 rounds (the rule as it was, commit 1bcd9a0);
* ``after``: the shipped rule, max(1, r T / SHORT_ROUND_RATIO) = max(1, d nu^2
  / (20 b)), r = d nu^2 / n, T the planned rounds (a threshold on r of 20 /
  T: 1 at 20 rounds, 3.3 at 6, 0.51 at 39);
* ``any``: the steady-state rule at any length (min(cut, cap));
* ``swamp``: max(1, sqrt(r / 0.2)), the steady-state rule's swamped branch;
* ``lin1`` / ``lin2`` / ``lin3``: max(1, r / 1), max(1, r / 2), max(1, r / 3);
* ``sq1``: max(1, r^2);
* ``rT30`` / ``rT40``: the shipped form with 30 / 40 for 20.

Cells: median R^2 over the seeds, the share of seeds at or above the zero
model (``>= 0``), and the median paired change against the first variant (``before``).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_short_streams.py \\
        --seeds 8 --out docs/benchmarks/short_streams.md
"""

import argparse
import contextlib
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.metrics import r2_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_lines  # noqa: E402

import skdpol.online._momentum as momentum  # noqa: E402
import skdpol.online._step_noise as step_noise  # noqa: E402
from skdpol import PrivateOnlineRegressor  # noqa: E402

SHIPPED = step_noise.noise_step_scale


def _short(fn):
    """A rule for streams under 40 planned rounds; the shipped one above."""
    def rule(n_features, noise_ratio, horizon_rows, n_rounds, *, base_divisor=50.0):
        if horizon_rows is None or not noise_ratio > 0 or n_rounds >= 40:
            return SHIPPED(n_features, noise_ratio, horizon_rows, n_rounds,
                           base_divisor=base_divisor)
        r = n_features * noise_ratio**2 / horizon_rows
        return max(1.0, fn(r, noise_ratio, n_features, horizon_rows, n_rounds))
    return rule


def _steady(r, nu, d, n, t):
    """The steady-state rule at any length (its cut and cap)."""
    cut = math.hypot(1.0, r / 0.2)
    return min(cut, max(15.0 * nu / 50.0, math.sqrt(r / 0.2)))


VARIANTS = {
    "before": _short(lambda r, nu, d, n, t: 1.0),
    "after": None,
    "any": _short(_steady),
    "swamp": _short(lambda r, nu, d, n, t: math.sqrt(r / 0.2)),
    "lin1": _short(lambda r, nu, d, n, t: r),
    "lin2": _short(lambda r, nu, d, n, t: r / 2),
    "lin3": _short(lambda r, nu, d, n, t: r / 3),
    "sq1": _short(lambda r, nu, d, n, t: r * r),
    "rT30": _short(lambda r, nu, d, n, t: r * t / 30),
    "rT40": _short(lambda r, nu, d, n, t: r * t / 40),
}


@contextlib.contextmanager
def variant(name):
    rule = VARIANTS[name]
    if rule is None:
        yield
        return
    saved = momentum.noise_step_scale
    momentum.noise_step_scale = rule
    try:
        yield
    finally:
        momentum.noise_step_scale = saved


def rows(kind, n, d, seed):
    """(X, y, X_test, y_test, data_norm, y_bound) of ``kind`` (module notes)."""
    rng = np.random.default_rng(seed)
    m = n + 5_000
    if kind == "wide-y":
        w = rng.normal(size=d)
        X = rng.normal(size=(m, d))
        y = X @ w + 1.0 + 0.5 * rng.normal(size=m)
        data_norm, y_bound = float(np.sqrt(d) * 2.5), float(np.abs(w).sum() * 3 + 1)
    else:
        w = rng.standard_normal(d)
        X = rng.standard_normal((m, d)) / np.sqrt(d)
        y = X @ w + 0.1 * rng.standard_normal(m)
        data_norm = float(np.sqrt(stats.chi2.ppf(1 - 1e-6, d) / d))
        y_bound = float(5.0 * np.sqrt(w @ w / d + 0.01))
    return X[:n], y[:n], X[n:], y[n:], data_norm, y_bound


def one_pass(kind, n, d, seed, eps, name, chunk=100):
    X, y, Xt, yt, data_norm, y_bound = rows(kind, n, d, seed)
    with variant(name), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PrivateOnlineRegressor(epsilon=eps, delta=1e-6, data_norm=data_norm,
                                     y_bound=y_bound, horizon=n, random_state=seed)
        for s in range(0, n, chunk):
            est.partial_fit(X[s:s + chunk], y[s:s + chunk])
    return r2_score(yt, est.predict(Xt)), r2_score(yt, np.zeros_like(yt))


def grid(kinds, widths, horizons, epsilons, seeds, names):
    lines = []
    for kind in kinds:
        lines += [f"## Rows `{kind}`", "",
                  "| d | rows | epsilon | zero model | " + " | ".join(names) + " |",
                  "|---|---|---|---|" + "---|" * len(names)]
        for d in widths:
            for n in horizons:
                for eps in epsilons:
                    res, zero = {}, None
                    for name in names:
                        out = np.array([one_pass(kind, n, d, s, eps, name) for s in seeds])
                        res[name], zero = out[:, 0], out[:, 1]
                    base = res[names[0]]
                    cells = []
                    for name in names:
                        v = res[name]
                        cell = f"{np.median(v):+.3f} ({np.mean(v >= zero):.2f})"
                        if name != names[0]:
                            cell += f" [{np.median(v - base):+.3f}]"
                        cells.append(cell)
                    lines.append(f"| {d} | {n:,} | {eps:g} | {np.median(zero):+.3f} | "
                                 + " | ".join(cells) + " |")
                    print(lines[-1], flush=True)
        lines.append("")
    return lines


def tables_section(names, seeds, epsilons):
    """King County and wine (``bench_stream.py``'s schemas, splits and chunks of
    1,000; delta 1e-6), with and without ``horizon``: ``before`` against
    ``after`` in the same run, and whether every published model is bit for
    bit the same (the short rule never reads a stream of 40 rounds or more)."""
    from bench_stream import _one_pass, _private, _score
    from proto_streams import load_tables, split

    from skdpol.datasets import data_home

    tables = load_tables(names, data_home())
    lines = ["## King County and wine (one pass, chunks of 1,000)", "",
             "| table | horizon | epsilon | before | after | models equal |",
             "|---|---|---|---|---|---|"]
    for name, table in tables.items():
        for horizon in (True, False):
            for eps in epsilons:
                res, same = {"before": [], "after": []}, True
                for seed in seeds:
                    Xtr, ytr, Xte, yte = split(table, seed)
                    n = Xtr.shape[0]
                    coefs = []
                    for v in res:
                        with variant(v), warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            est = _one_pass(_private(table, n, eps, seed,
                                                     horizon=n if horizon else None),
                                            table, Xtr, ytr)
                        res[v].append(_score(table, est, Xte, yte))
                        coefs.append(np.append(est.coef_, est.intercept_))
                    same &= bool(np.array_equal(coefs[0], coefs[1]))
                lines.append(f"| {name} | {'n' if horizon else 'None'} | {eps:g} | "
                             f"{np.median(res['before']):.4f} | {np.median(res['after']):.4f} "
                             f"| {'yes' if same else 'no'} |")
                print(lines[-1], flush=True)
    return lines + [""]


READING = """## Reading

* **What was wrong.** Under 40 planned rounds (a horizon under 2,000 rows:
  rounds of 50) the step's noise rule was off, so a noisy short stream took
  the full step b / (50 R~^2) whatever its width. At d = 20 and 50 the
  released noise then swamped what 6-39 rounds can learn: ``before``'s
  median R^2 reaches -2.8 (d = 20, 1,000 rows, epsilon 0.5), -7.9 (d = 50)
  and -15.4 (d = 50, 1,950 rows), and in 29 of the 60 cells of d = 20-50
  the stream is below the zero model on most seeds.
* **The rule** (``skdpol/online/_step_noise.py``, ``noise_step_scale``):
  under 40 rounds the divisor is 50 max(1, r T / 20), r = d nu^2 / n the
  steady-state rule's public ratio and T the planned rounds: r T = d nu^2 /
  b is one round's noise ratio, what a transient of T single steps sees.
  Public (d, the horizon, the rounds, the mechanism's noise at epsilon and
  delta), fixed before any row is read: post-processing.
* **d = 20-50** (``after``): the worst median is -0.06, and 58 of the 60
  cells are at or above the zero model on most seeds. The two left are d =
  50 on the ``wide-y`` rows (600 rows at epsilon 0.5, 1,000 at epsilon 1: 3
  of 8 seeds; medians -0.034 and -0.058 against the zero model's -0.020).
* **d = 2-8**: no change where r T <= 20 (every stream at epsilon 1 and 4).
  At epsilon 0.5: d = 2 and 4 move by -0.02 to +0.12, d = 8 by -0.18 to
  +0.65: 4 of its 10 cells of 300-1,000 rows lose 0.03-0.18 (the most: 600
  ``unit`` rows; the cut slows a transient that was still learning), and
  1,500-1,950 rows gain up to +0.65 (the full step was too noisy there too).
* **diabetes** (the benchmarks' one short real table, last table): at
  epsilon 0.5 (r T = 41) the rule halves the step and the median R^2 goes
  from 0.076 to -0.011 (still above its zero model, the label range's
  midpoint, about -0.2); epsilon 1 and 2 (r T = 11 and 3) are unchanged.
* **The threshold's trade-off** (same seeds): 30 and 40 instead of 20
  (``rT30``, ``rT40``) leave 11 and 16 cells of d = 20-50 below the zero
  model on most seeds (all on the ``wide-y`` rows, whose label bound is
  loose: the signal spans ~0.4 / sqrt(d) of it), the brief's d = 20, 1,000
  rows, epsilon 1 among them (-0.17 and -0.33), and cost d = 2-8 at most
  0.09 and 0.03 and diabetes 0.05 and 0.00. Thresholds on r alone:
  ``lin1`` (max(1, r)) left 5 cells and cost d = 2-8 up to 0.35 on 6-12
  rounds; ``lin2`` / ``lin3`` left 14 / 16; ``sq1`` none, but cost d = 2-8 up
  to 0.60; ``any`` (the steady rule at any length, last session's
  measurement) left 5 and cost d = 2-8 up to 0.61. 20 is shipped: it is the
  only form that leaves at most 2 cells and costs d = 2-8 less than 0.2;
  40 is the choice if short real tables with tight bounds matter more than
  wide streams with loose ones.
* **Long streams** (3,000 and 10,000 rows, 40 rounds or more) and the long
  real tables are untouched by construction: every variant's column is
  equal there, and King County and wine publish the same models bit for
  bit, with and without ``horizon``.
* **What is left.** The steady-state rule itself at d = 50 over 3,000 rows
  (60 rounds) on the ``wide-y`` rows at epsilon 0.5: -0.254, no seed above the
  zero model (its cap NOISE_CAP nu / 50 binds: scale 6.3 where the noise
  term asks for 38; the short rule would give 23). Raising the cap changes
  the real tables' streams, so it is a separate change.
"""


def diabetes_section(seeds, names):
    """``bench_utility.py``'s diabetes rows (442 rows, d = 10; 353 training rows:
    8 rounds of 50, its partial_fit in 10 chunks, horizon = the rows, delta
    1e-5, the default alpha): a short real table."""
    import bench_utility as bu

    splits = bu.make_splits(seeds, 1_000)
    lines = ["## diabetes (bench_utility.py's partial_fit: 353 rows, 8 rounds of 50)", "",
             "| epsilon | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for eps in bu.EPSILONS:
        res = {}
        for name in names:
            with variant(name), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res[name] = np.array([bu.skdpol_r2(splits[("diabetes", s)], eps, None, s,
                                                   "partial_fit")[0] for s in seeds])
        base = res[names[0]]
        lines.append(f"| {eps:g} | " + " | ".join(
            f"{np.median(v):+.3f}" + ("" if k == names[0] else f" [{np.median(v - base):+.3f}]")
            for k, v in res.items()) + " |")
        print(lines[-1], flush=True)
    return lines + [""]


def _list(text, kind=float):
    return [kind(x) for x in text.split(",")]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--kinds", default="wide-y,unit")
    p.add_argument("--widths", default="2,4,8,20,50")
    p.add_argument("--horizons", default="300,600,1000,1500,1950,3000,10000")
    p.add_argument("--epsilons", default="0.5,1,4")
    p.add_argument("--variants", default="before,after,lin1,lin2,lin3,sq1,any")
    p.add_argument("--tables", default="", help="e.g. kc,wine: the real tables' section")
    p.add_argument("--table-seeds", type=int, default=20)
    p.add_argument("--diabetes", type=int, default=0, help="seeds of the diabetes section")
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    names = a.variants.split(",")
    t0 = time.perf_counter()
    lines = []
    if a.kinds:
        lines += grid(a.kinds.split(","), _list(a.widths, int), _list(a.horizons, int),
                      _list(a.epsilons), range(a.seeds), names)
    if a.tables:
        lines += tables_section(a.tables.split(","), range(a.table_seeds), [0.5, 1.0])
    if a.diabetes:
        lines += diabetes_section(range(a.diabetes), names)
    seconds = time.perf_counter() - t0
    print(f"{seconds:.0f} s")
    if a.out:
        command = "python benchmarks/bench_short_streams.py " + " ".join(sys.argv[1:])
        head = ["# Short known-horizon streams of the regressor's default stream", "",
                f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice {command}` ({seconds:.0f} s)",
                "", *machine_lines(), "",
                "One pass in chunks of 100, `horizon` = the rows, delta 1e-6, R^2 on 5,000 "
                "fresh rows. Cells: median R^2 over the seeds, (the share of seeds at or "
                "above the zero model), [the median paired change against `before`]. "
                "Variants: the module docstring of `benchmarks/bench_short_streams.py`.", ""]
        tail = [READING] if a.kinds and a.tables else []
        a.out.write_text("\n".join(head + lines + tail) + "\n")


if __name__ == "__main__":
    main()
