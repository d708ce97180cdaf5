"""The classifier's streams on real tables: "ls" (least squares on coded labels) against
the previous default stream ("ftrl"), fit and one pass of SGD.

One pass over each training table in chunks of 1,000 rows, ``horizon`` = training rows,
delta = 1e-6, public preprocessing from the shipped schemas
(``skdpol.datasets.table_schema``, ``skdpol.preprocessing.from_schema``). Adult uses the
file's split (the seed changes only the noise), credit default a random 80/20 split per
seed. Besides the decision metric (AUC or accuracy), the test log loss shows what
``predict_proba`` is worth. Instead: ``--width`` times one call at growing widths
(the ``algorithm="auto"`` threshold), ``--speed`` the rows per second of a pass
against ``SGDClassifier``, ``--scales`` the log loss of candidate logit scales.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_classifier_stream.py \\
        --seeds 5 --out docs/benchmarks/classifier_stream.md
"""

import argparse
import math
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

from _common import machine_lines

import numpy as np
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
from sklearn.model_selection import train_test_split

from skdpol import PrivateOnlineLogistic
from skdpol.datasets import load_table
from skdpol.preprocessing import from_schema

DELTA = 1e-6
CHUNK = 1_000
NAMES = {"credit": "credit default (AUC)", "adult": "Adult (accuracy)"}


def load(name):
    data = load_table({"credit": "credit_default", "adult": "adult"}[name])
    pre = from_schema(data.schema)
    X = pre.preprocessor.fit_transform(data.X)  # reads no statistic of the rows
    y = (pre.label_transform(data.y) == pre.classes[1]).astype(int)
    return dict(X=X, y=y, data_norm=pre.data_norm)


def split(name, table, seed):
    X, y = table["X"], table["y"]
    if name == "adult":
        n = 32_561  # the file's own split: adult.data, then adult.test
        return X[:n], y[:n], X[n:], y[n:]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed)
    return Xtr, ytr, Xte, yte


def metrics(name, est, Xte, yte):
    s = est.decision_function(Xte)
    main = roc_auc_score(yte, s) if name == "credit" else accuracy_score(yte, (s > 0).astype(int))
    return main, log_loss(yte, est.predict_proba(Xte)[:, 1])


def run(name, table, seed, eps, how, **params):
    Xtr, ytr, Xte, yte = split(name, table, seed)
    n = Xtr.shape[0]
    est = PrivateOnlineLogistic(epsilon=eps, delta=DELTA, data_norm=table["data_norm"],
                                random_state=seed, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if how == "fit":
            est.fit(Xtr, ytr, classes=[0, 1])
        else:
            est.set_params(horizon=n)
            for lo in range(0, n, CHUNK):
                est.partial_fit(Xtr[lo:lo + CHUNK], ytr[lo:lo + CHUNK], classes=[0, 1])
    return metrics(name, est, Xte, yte)


def run_sgd(name, table, seed):
    Xtr, ytr, Xte, yte = split(name, table, seed)
    est = SGDClassifier(loss="log_loss", random_state=seed)
    for lo in range(0, Xtr.shape[0], CHUNK):
        est.partial_fit(Xtr[lo:lo + CHUNK], ytr[lo:lo + CHUNK], classes=[0, 1])
    return metrics(name, est, Xte, yte)


METHODS = [  # (label, how, params, epsilons)
    ("fit (noisy GD)", "fit", {}, (0.5, 1.0)),
    ("partial_fit, algorithm='ftrl' (the previous auto)", "pf", {"algorithm": "ftrl"},
     (1.0, math.inf)),
    ("partial_fit, algorithm='auto' (now 'ls')", "pf", {}, (1.0, math.inf)),
    ("partial_fit, 'ls', batch_size=8,000 (a release every 8 chunks)", "pf",
     {"algorithm": "ls", "batch_size": 8_000}, (1.0,)),
    ("fit, algorithm='ls' (one release of the sums)", "fit", {"algorithm": "ls"}, (1.0,)),
]


def cell(values):
    if len(values) == 0:
        return ""
    return f"{np.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def tables_report(results, names, eps_columns):
    lines = []
    for which, title in ((0, "decision metric"), (1, "test log loss (lower is better)")):
        header = ["method"] + [f"{NAMES[t]}, eps={e:g}" for t in names for e in eps_columns]
        if which:
            header = ["method"] + [f"{NAMES[t].split(' (')[0]} log loss, eps={e:g}"
                                   for t in names for e in eps_columns]
        lines += [f"#### {title}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        for label in dict.fromkeys(r[0] for r in results):
            cells = [cell([r[4][which] for r in results if r[0] == label and r[1] == t
                           and r[2] == e]) for t in names for e in eps_columns]
            lines.append("| " + " | ".join([label] + cells) + " |")
        lines.append("")
    return lines


def width_lines(widths, n_calls=3):
    """Seconds per partial_fit call of 1,000 rows and peak traced memory, by width."""
    lines = ["| d | algorithm | s per call (median of the last calls) | peak traced MB |",
             "|---|---|---|---|"]
    rng = np.random.default_rng(0)
    for d in widths:
        X = rng.normal(size=(CHUNK, d)) / math.sqrt(d)
        y = (X[:, 0] > 0).astype(int)
        for algorithm in ("ls", "ftrl"):
            est = PrivateOnlineLogistic(epsilon=1.0, delta=DELTA, data_norm=1.0,
                                        algorithm=algorithm, horizon=CHUNK * 30,
                                        random_state=0)
            times = []
            tracemalloc.start()
            for _ in range(n_calls):
                t0 = time.perf_counter()
                est.partial_fit(X, y, classes=[0, 1])
                times.append(time.perf_counter() - t0)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            lines.append(f"| {d} | {algorithm} | {np.median(times[1:]):.3f} | {peak:.0f} |")
            print(lines[-1], flush=True)
    return lines


def scale_lines(names, n_seeds, scales=(2.0, 2.8, 3.0, 4.0)):
    """Test log loss of sigmoid(a s) for the +-1 least-squares score s of one
    "ls" pass (the published score divided by LOGIT_SCALE), and of the clipped
    linear probability model (1 + s) / 2: what sets LOGIT_SCALE."""
    from scipy.special import expit

    from skdpol.online._lsq import LOGIT_SCALE
    header = ["table, eps"] + [f"a = {a:g}" for a in scales] + ["(1 + s) / 2 in [0.01, 0.99]"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in names:
        table = load(name)
        for eps in (1.0, math.inf):
            rows = []
            for seed in range(n_seeds):
                Xtr, ytr, Xte, yte = split(name, table, seed)
                est = PrivateOnlineLogistic(epsilon=eps, delta=DELTA, data_norm=table["data_norm"],
                                            random_state=seed, horizon=Xtr.shape[0],
                                            algorithm="ls")
                for lo in range(0, Xtr.shape[0], CHUNK):
                    est.partial_fit(Xtr[lo:lo + CHUNK], ytr[lo:lo + CHUNK], classes=[0, 1])
                s = est.decision_function(Xte) / LOGIT_SCALE
                rows.append([log_loss(yte, np.clip(expit(a * s), 1e-12, 1 - 1e-12))
                             for a in scales] + [log_loss(yte, np.clip((1 + s) / 2, 0.01, 0.99))])
            rows = np.array(rows)
            lines.append("| " + " | ".join([f"{name}, {eps:g}"] + [cell(c) for c in rows.T]) + " |")
            print(lines[-1], flush=True)
    return lines


def speed_lines(widths, n=200_000, chunk=10_000, repeats=3):
    """Rows per second of one pass (chunks of 10,000, one BLAS thread) of "ls",
    "ftrl" and SGDClassifier, interleaved; the ratios are of medians."""
    from threadpoolctl import threadpool_limits
    lines = ["| d | ls rows/s | ftrl rows/s | SGDClassifier rows/s | ls / SGD | ftrl / SGD |",
             "|---|---|---|---|---|---|"]
    rng = np.random.default_rng(0)
    for d in widths:
        X = rng.normal(size=(n, d)) / math.sqrt(d)
        y = (X @ rng.normal(size=d) > 0).astype(int)
        seconds = {}
        for _ in range(repeats):
            for name in ("ls", "ftrl", "sgd"):
                est = (SGDClassifier() if name == "sgd" else PrivateOnlineLogistic(
                    epsilon=1.0, delta=DELTA, data_norm=1.5, horizon=n, random_state=0,
                    algorithm=name))
                with threadpool_limits(1), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    for lo in range(0, n, chunk):
                        est.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk], classes=[0, 1])
                    seconds.setdefault(name, []).append(time.perf_counter() - t0)
        med = {k: float(np.median(v)) for k, v in seconds.items()}
        lines.append(f"| {d} | {n / med['ls']:,.0f} | {n / med['ftrl']:,.0f} | "
                     f"{n / med['sgd']:,.0f} | {med['sgd'] / med['ls']:.2f}x | "
                     f"{med['sgd'] / med['ftrl']:.2f}x |")
        print(lines[-1], flush=True)
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--tables", default="credit,adult")
    p.add_argument("--width", default="", help="comma list of widths: time one call instead")
    p.add_argument("--speed", default="", help="comma list of widths: throughput instead")
    p.add_argument("--scales", action="store_true",
                   help="log loss of the candidate logit scales of 'ls' instead")
    p.add_argument("--out", help="write the markdown here")
    args = p.parse_args()
    cmd = ("OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python "
           "benchmarks/bench_classifier_stream.py " + " ".join(sys.argv[1:]))
    if args.speed:
        lines = [f"Produced by `{cmd}`.", "", *machine_lines(), "",
                 *speed_lines([int(w) for w in args.speed.split(",")])]
    elif args.scales:
        lines = [f"Produced by `{cmd}`.", "", *machine_lines(), "",
                 *scale_lines(args.tables.split(","), args.seeds)]
    elif args.width:
        lines = [f"Produced by `{cmd}`.", "", *machine_lines(), "",
                 *width_lines([int(w) for w in args.width.split(",")])]
    else:
        names = args.tables.split(",")
        results = []
        t0 = time.perf_counter()
        for name in names:
            table = load(name)
            for seed in range(args.seeds):
                for label, how, params, epsilons in METHODS:
                    for eps in epsilons:
                        results.append((label, name, eps, seed,
                                        run(name, table, seed, eps, how, **params)))
                        print(results[-1], flush=True)
                results.append(("SGD one pass (non-private)", name, math.inf, seed,
                                run_sgd(name, table, seed)))
        lines = [f"Produced by `{cmd}` ({args.seeds} seeds, "
                 f"{(time.perf_counter() - t0) / 60:.1f} min). Cells: median [min, max] over "
                 "seeds (seed = split for credit default, noise for both).", "",
                 *machine_lines(), "", *tables_report(results, names, (0.5, 1.0, math.inf))]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
