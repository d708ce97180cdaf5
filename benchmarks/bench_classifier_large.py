"""The classifier's stream past a 100,000-row horizon: "ls" against "ftrl-momentum".

Issue 31 asks the classifier's default ``partial_fit`` to run at >= 1x
``SGDClassifier.partial_fit`` (d = 54, 200,000 rows in chunks of 10,000,
``bench_speed_memory.py``). The default below 1,000 features, "ls", sums a
d x d Gram of every row: O(n d^2) against SGD's O(n d), a floor of ~0.84x
at d = 54 (``docs/benchmarks/speed_memory.md``). "ftrl-momentum" is O(n d)
and its speed grows with its rounds. This script measures what each costs
the model where a long horizon would let ``algorithm="auto"`` take the
first-order stream, the same run for every method:

* generated rows (N(0, I/d), norm about 1; ``data_norm`` the 1 - 1e-6
  quantile of the norm) with labels: ``gauss``, the sign of a linear score
  plus noise; ``short``, the same rows scaled by 1/4 (median norm a quarter of
  ``data_norm``, the public bound unchanged); ``rare``, the top 12 % of the
  score (AUC); ``logit``, Bernoulli(sigmoid(4 x.w)) (AUC); ``aligned``, rows
  with most of their norm along one direction (the curvature's worst case
  for a big step);
* Adult and credit default through their shipped schemas, training rows
  drawn with replacement up to the horizon (test: the untouched test rows),
  so that a real table's rows and label balance meet a long stream;

one pass in chunks of 10,000 rows, ``horizon`` = rows, delta = n^-1.1 (the
speed benchmark's), epsilon 0.5 / 1 / inf, several seeds: medians [min, max],
and the rows per second of the pass against one pass of ``SGDClassifier``
(same run, one BLAS thread; medians of the per-seed ratios).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_classifier_large.py \\
        --seeds 3 --out docs/benchmarks/classifier_large.md
"""

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import accuracy_score, roc_auc_score
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_lines, md_table  # noqa: E402
from proto_streams import load_tables  # noqa: E402

from skdpol import PrivateOnlineLogistic  # noqa: E402
from skdpol.datasets import data_home  # noqa: E402

CHUNK = 10_000


def generated(kind, n, d, seed):
    """(Xtr, ytr, Xte, yte, data_norm, metric) of a generated stream."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    X = rng.standard_normal((n + 20_000, d)) / np.sqrt(d)
    s = X @ w / np.linalg.norm(w) * np.sqrt(d)  # score of unit variance
    metric = "accuracy"
    if kind == "rare":
        y, metric = (s > np.quantile(s, 0.88)).astype(int), "AUC"
    elif kind == "logit":
        y, metric = (rng.random(s.size) < 1 / (1 + np.exp(-4 * s))).astype(int), "AUC"
    else:
        y = (s + 0.1 * rng.standard_normal(s.size) > 0).astype(int)
    if kind == "short":
        X = X / 4
    elif kind == "aligned":  # most of every row's norm on one public-unknown direction
        e = rng.standard_normal(d)
        X = 0.3 * X + 0.9 * rng.standard_normal((X.shape[0], 1)) * (e / np.linalg.norm(e))
        s = X @ w / np.linalg.norm(w) * np.sqrt(d)
        y = (s + 0.1 * rng.standard_normal(s.size) * s.std() > 0).astype(int)
    data_norm = float(np.sqrt(stats.chi2.ppf(1 - 1e-6, d) / d))  # of the unscaled rows
    return X[:n], y[:n], X[n:], y[n:], data_norm, metric


def bootstrapped(table, n, seed):
    rng = np.random.default_rng(seed)
    Xtr, ytr = table.get("Xtr", table.get("X")), table.get("ytr", table.get("y"))
    if "Xte" in table:
        Xte, yte = table["Xte"], table["yte"]
    else:  # a random fifth held out, the rest drawn from
        idx = rng.permutation(Xtr.shape[0])
        cut = Xtr.shape[0] // 5
        Xte, yte, Xtr, ytr = Xtr[idx[:cut]], ytr[idx[:cut]], Xtr[idx[cut:]], ytr[idx[cut:]]
    pick = rng.integers(0, Xtr.shape[0], n)
    return (np.ascontiguousarray(Xtr[pick]), ytr[pick], Xte, yte, table["data_norm"],
            table["metric"])


def score(metric, est, Xte, yte):
    if metric == "AUC":
        return roc_auc_score(yte, est.decision_function(Xte))
    return accuracy_score(yte, est.predict(Xte))


def one_pass(make, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make()
        t0 = time.process_time()
        for lo in range(0, X.shape[0], CHUNK):
            est.partial_fit(X[lo:lo + CHUNK], y[lo:lo + CHUNK], classes=[0, 1])
        return time.process_time() - t0, est


def methods(rounds):
    out = {"auto": {}, "ls": dict(algorithm="ls")}
    for b in rounds:
        out[f"ftrl-momentum, rounds of {b}"] = dict(algorithm="ftrl-momentum", batch_size=b)
    return out


def run(cases, seeds, epsilons, rounds):
    rows = []
    for case, make_data in cases:
        for eps in epsilons:
            cells = {}
            for seed in seeds:
                Xtr, ytr, Xte, yte, dn, metric = make_data(seed)
                n = Xtr.shape[0]
                t_sgd, sgd = one_pass(lambda: SGDClassifier(random_state=seed), Xtr, ytr)
                cells.setdefault("SGD one pass (non-private)", []).append(
                    (score(metric, sgd, Xte, yte), 1.0))
                for name, kw in methods(rounds).items():
                    def make(kw=kw):
                        return PrivateOnlineLogistic(epsilon=eps, delta=1 / n**1.1, data_norm=dn,
                                                     horizon=n, random_state=seed, **kw)
                    t, est = one_pass(make, Xtr, ytr)
                    label = name if name != "auto" else f"auto (= {est.algorithm_})"
                    cells.setdefault(label, []).append((score(metric, est, Xte, yte), t_sgd / t))
            for name, vals in cells.items():
                s = np.array([v[0] for v in vals])
                r = np.array([v[1] for v in vals])
                rows.append([case, metric, "inf" if math.isinf(eps) else f"{eps:g}", name,
                             f"{np.median(s):.4f} [{s.min():.4f}, {s.max():.4f}]",
                             f"{np.median(r):.2f}x"])
            print("\n".join(" | ".join(r) for r in rows[-len(cells):]), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rounds", default="500,1000")
    ap.add_argument("--quick", action="store_true", help="one small case, no file")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="", help="comma-separated data kinds / table names")
    args = ap.parse_args()
    seeds = list(range(args.seeds))
    rounds = [int(b) for b in args.rounds.split(",") if b]
    epsilons = (0.5, 1.0, math.inf)
    cases = []
    shapes = [(200_000, 54)] if args.quick else [(100_000, 54), (200_000, 54), (500_000, 54),
                                                 (200_000, 10), (200_000, 200)]
    kinds = ["gauss"] if args.quick else ["gauss", "short", "rare", "logit", "aligned"]
    for kind in kinds:
        for n, d in shapes:
            if kind != "gauss" and (n, d) != (200_000, 54):
                continue
            cases.append((f"{kind}, n = {n:,}, d = {d}",
                          lambda s, kind=kind, n=n, d=d: generated(kind, n, d, s)))
    only = [k for k in args.only.split(",") if k]
    if only:
        cases = [c for c in cases if c[0].split(",")[0] in only]
    if not args.quick and (not only or {"adult", "credit"} & set(only)):
        tables = load_tables(["adult", "credit"], data_home())
        for name, table in tables.items():
            if only and name not in only:
                continue
            cases.append((f"{name} drawn to 200,000 rows",
                          lambda s, t=table: bootstrapped(t, 200_000, s)))
    t0 = time.time()
    with threadpool_limits(1):
        rows = run(cases, seeds, epsilons if not args.quick else (1.0,), rounds)
    table = md_table(["data", "metric", "epsilon", "method", "score median [min, max]",
                      "rows/s vs SGD (median)"], rows)
    text = "\n".join([
        "# The classifier past a 100,000-row horizon: \"ls\" against \"ftrl-momentum\"", "",
        f"Produced by `{' '.join(['python', *sys.argv])}` ({len(seeds)} seeds, "
        f"{(time.time() - t0) / 60:.1f} min).", "", *machine_lines(), "",
        __doc__.split("\n\n", 1)[1].split("\n    OMP")[0].strip(), "", table, ""])
    if args.out and not args.quick:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
