"""Wide data: rows per second against SGD, peak memory, accuracy / R^2 (issue 32).

Writes ``docs/benchmarks/wide.md``. For each width (dense d = 100, 1,000;
d = 2^17 CSR with 30 nonzeros a row, like hashed features) a stream of unit
norm rows is fed in chunks to ``partial_fit`` of a skdpol estimator and of
scikit-learn's ``SGDClassifier`` / ``SGDRegressor`` in the same run; peak
memory is tracemalloc's over the stream (the chunks themselves excluded);
the score is on held-out rows. Plus Adult through ``OneHotEncoder`` at its
defaults (sparse CSR into the model) against the same pipeline made dense.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_wide.py [--rows N] [--seeds K]

To iterate on one row, ``--only regressor:1000`` (repeatable; ``kind:d``,
d = 131072 for the CSR row) runs just that row and prints it; the doc is
then written only with ``--out``. The first estimator of a process pays
one-off costs in its rate (regressor d = 1,000 run alone: 0.32x SGD's for
seed 0, 0.83x for seed 1; in the full run the d = 100 row pays them): read
rates from seed 1 on when iterating.
"""

import argparse
import os
import sys
import time
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier, SGDRegressor

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "docs", "benchmarks", "wide.md")
DENSE_WIDE_ROWS = 20_000


def make_rows(n, d, sparse, rng):
    """Unit-norm rows (dense Gaussian, or 30 random nonzeros a row) and a
    linear target of norm ~1 (so |y| <= ~3)."""
    if sparse:
        nnz = 30
        # hashed tokens are far from uniform: column j drawn with density ~ j^-3/4
        # (a Zipf-like law), so frequent columns carry most of the signal
        idx = np.sort((d * rng.random(size=(n, nnz)) ** 4).astype(np.int64), axis=1)
        data = rng.normal(size=(n, nnz))
        X = sp.csr_matrix((data.ravel(), idx.ravel(), np.arange(0, n * nnz + 1, nnz)),
                          shape=(n, d))
        X.sum_duplicates()
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(1.0 / norms) @ X
        w = rng.normal(size=d)
    else:
        X = rng.normal(size=(n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        w = rng.normal(size=d)
    s = X @ w
    return (sp.csr_matrix(X) if sparse else X), s / np.std(s)  # margins of sd 1


def stream(est, X, y, chunk, **first):
    """(rows per second, peak extra bytes) of partial_fit over the chunks."""
    tracemalloc.start()
    t0 = time.perf_counter()
    for i, lo in enumerate(range(0, X.shape[0], chunk)):
        est.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk], **(first if i == 0 else {}))
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return X.shape[0] / elapsed, peak


def row(kind, d, sparse, n, chunk, seed):
    rng = np.random.default_rng(seed)
    X, s = make_rows(n + 5_000, d, sparse, rng)
    X_test, s_test = X[n:], s[n:]
    X, s = X[:n], s[:n]
    out = []
    if kind == "classifier":
        y, y_test = (s > 0).astype(int), (s_test > 0).astype(int)
        sgd = SGDClassifier(random_state=seed)
        sgd_rate, sgd_mem = stream(sgd, X, y, chunk, classes=[0, 1])
        ref = sgd.score(X_test, y_test)
        for eps in (1.0, np.inf):
            est = PrivateOnlineLogistic(epsilon=eps, data_norm=1.0, horizon=n,
                                        random_state=seed)
            rate, mem = stream(est, X, y, chunk, classes=[0, 1])
            out.append((eps, est.algorithm_, rate, sgd_rate, mem, sgd_mem,
                        est.score(X_test, y_test), ref))
    else:
        y, y_test = s, s_test
        sgd = SGDRegressor(random_state=seed)
        sgd_rate, sgd_mem = stream(sgd, X, y, chunk)
        ref = sgd.score(X_test, y_test)
        # the estimator's defaults (algorithm="auto"): the acceptance is about them
        for eps in (1.0, np.inf):
            est = PrivateOnlineRegressor(epsilon=eps, data_norm=1.0, y_bound=4.0, horizon=n,
                                         random_state=seed)
            rate, mem = stream(est, X, y, chunk)
            out.append((eps, est.algorithm_, rate, sgd_rate, mem, sgd_mem,
                        est.score(X_test, y_test), ref))
    return out


def adult(seeds):
    """Adult: OneHotEncoder at its defaults (sparse CSR into the model)
    against the same pipeline made dense; test accuracy per seed."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import tempfile

    from adult_pipeline_ledger import adult_private_pipeline
    from skdpol import PrivacyLedger
    from skdpol.datasets import load_adult

    data = load_adult()
    res = {"sparse": [], "dense": []}
    for seed in range(seeds):
        for kind in res:
            ledger = PrivacyLedger(os.path.join(tempfile.mkdtemp(), "a.sqlite"),
                                   budget=(1.0, 1e-5))
            pipe = adult_private_pipeline(ledger, random_state=seed)
            if kind == "dense":
                pipe.steps[0][1].set_params(sparse_threshold=0.0)
            t0 = time.perf_counter()
            pipe.fit(data.X_train, data.y_train, privateonlinelogistic__classes=[0, 1])
            res[kind].append((pipe.score(data.X_test, data.y_test),
                              time.perf_counter() - t0))
    return res


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--no-adult", action="store_true")
    parser.add_argument("--only", action="append", default=[], metavar="KIND:D",
                        help="run only these rows (e.g. regressor:1000); implies --no-adult "
                             "and writes no doc unless --out is given")
    parser.add_argument("--out", default=None, help=f"the doc to write (default {OUT})")
    args = parser.parse_args()
    only = {(k, int(d)) for k, d in (item.split(":") for item in args.only)}
    out = args.out if args.out is not None or not only else None
    if only:
        args.no_adult = True
    warnings.simplefilter("ignore")
    # d = 10,000 dense: at most DENSE_WIDE_ROWS rows (100,000 x 10,000 float64
    # rows are 8 GB before any learning; 20,000 are 1.6 GB)
    widths = [(100, False), (1_000, False), (10_000, False), (2**17, True)]
    lines = [
        "# Wide data: rows per second, memory, accuracy",
        "",
        "Written by `benchmarks/bench_wide.py` "
        f"(`--rows {args.rows} --chunk {args.chunk} --seeds {args.seeds}"
        f"{''.join(f' --only {item}' for item in args.only)}`), "
        "one process, `OMP_NUM_THREADS=1`, on a 2-core machine shared with other jobs "
        "(rates are indicative). Unit-norm rows, `data_norm=1`; a linear target. "
        "`rate` and `SGD rate`: rows per second of `partial_fit` over the stream "
        "(the same run); memory: tracemalloc's peak over the stream (the chunks "
        "excluded); score: accuracy (classifier) or R^2 (regressor) on 5,000 held-out "
        "rows. Every estimator at its defaults (`algorithm=\"auto\"`, "
        "`batch_size=\"auto\"`, `mechanism=\"auto\"`); d = 10,000 dense is run on "
        f"{DENSE_WIDE_ROWS:,} rows (100,000 would take 8 GB before any learning).",
        "",
        "| estimator | d | input | rows | epsilon | algorithm | rate | SGD rate | ratio | "
        "peak MB | SGD peak MB | score | SGD score |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in ("classifier", "regressor"):
        for d, sparse in widths:
            if only and (kind, d) not in only:
                continue
            for seed in range(args.seeds):
                n = args.rows if sparse or d < 10_000 else min(args.rows, DENSE_WIDE_ROWS)
                for eps, alg, rate, sgd_rate, mem, sgd_mem, score, ref in row(
                        kind, d, sparse, n, args.chunk, seed):
                    line = (f"| {kind} | {d} | {'CSR' if sparse else 'dense'} | {n:,} | {eps:g} | "
                            f"{alg} | {rate:,.0f} | {sgd_rate:,.0f} | {rate / sgd_rate:.2f} | "
                            f"{mem / 1e6:.1f} | {sgd_mem / 1e6:.1f} | {score:.3f} | {ref:.3f} |")
                    print(line, flush=True)
                    lines.append(line)
    if not args.no_adult:
        res = adult(args.seeds)
        lines += ["", "## Adult: OneHotEncoder at its defaults (sparse) vs dense", "",
                  "`examples/adult_pipeline_ledger.py`'s pipeline (scalers epsilon 0.1 "
                  "each, model epsilon 0.8): its `ColumnTransformer` with "
                  "`sparse_threshold=1` (CSR into the model) or 0 (dense).", "",
                  "| input | seed | test accuracy | fit seconds |", "|---|---|---|---|"]
        for kind, runs in res.items():
            for seed, (acc, sec) in enumerate(runs):
                lines.append(f"| {kind} | {seed} | {acc:.4f} | {sec:.1f} |")
        print("\n".join(lines[-2 * args.seeds:]))
    lines += [
        "", "## Reading", "",
        "Acceptance (issue 32), rates from the same run as SGD's "
        "(the classifier's figures: seed 0):",
        "",
        "* Classifier, 2^17 CSR, 100,000 rows, chunks of 10,000 (auto: `ftrl`, BLT, "
        "rounds of 500 rows): memory met (tens of MB); rate not met (0.14x SGD at "
        "epsilon = inf, 0.05x at epsilon = 1); accuracy at epsilon = inf not met "
        "(0.616 against SGD's 0.687, target >= 0.667).",
        "* Regressor, d = 1,000 dense, 100,000 rows, chunks of 10,000 (auto: "
        "`ftrl-momentum`): met, 3 seeds: R^2 at epsilon = 1 0.930 / 0.935 / 0.931 "
        "(target 0.7; 0.558 / 0.562 / 0.608 before the step's noise rule), 1.000 at "
        "epsilon = inf; rate at epsilon = 1 0.73x / 0.83x / 1.00x SGD's (target 0.5x; "
        "the rule changes no cost per round). d = 100 is unchanged (the rule is inert "
        "there: 0.992-0.994). d = 10,000 (20,000 rows) at epsilon = 1: -0.25 (was -3.5; "
        "0.22 at epsilon = inf, SGD 0.00); 2^17 CSR: -0.06 (was -4.2; 0.36-0.41 at "
        "epsilon = inf): with d/n = 0.5 or hashed rows the stream stays below the zero "
        "model there.",
        "* Why the stream lost at d = 1,000 (`skdpol/online/_step_noise.py`): the "
        "prefix sums' noise per coordinate is nu = 13.5 leaf sensitivities at epsilon 1 "
        "(1,000 rounds), whatever d; at the step b / (50 R~^2) with momentum 0.95 the "
        "iterate's own noise is ~40 nu / 50 ~ 10 residual bounds, so most residuals "
        "are clipped and the stream sees a fraction of the curvature (1/d for unit "
        "rows): the averaged model's noise grows like d nu^2 / n. One seed "
        "(`benchmarks/diag_wide_regressor.py --no-rule --grid ...`), step "
        "divisor 50 / 100 / 200 / 400: R^2 0.56 / 0.87 / 0.93 / 0.86 (epsilon 1), "
        "-3.07 / -0.07 / 0.65 / 0.75 (0.5), 0.95 / 0.98 / 0.98 / 0.90 (2); momentum "
        "0.9 / 0.8 at divisor 50: 0.85 / 0.91 (0.98: -1.03); averaging tail 1.0 / "
        "0.5: 0.59 / 0.46; rounds of 200 / 500 / 1,000 rows: 0.70 / 0.81 / 0.84; "
        "residual_bound 0.25 / 0.0625: -0.72 / 0.88. The rule: divisor 50 x "
        "max(1, min(r / 0.4, 15 nu / 50)), r = d nu^2 / n, off under 40 rounds; it "
        "is 50 on King County (r = 0.17) and wine (0.38) at epsilon 1, so "
        "bench_stream's streams are unchanged; at epsilon 0.5 (3 seeds, not "
        "defaults before) King County 0.647 -> 0.715, wine (5 seeds) -0.21 -> 0.12.",
        "* Profile (`cProfile`, classifier at 2^17, epsilon = 1): of 3.6 s, 2.7 s in the "
        "BLT's per-round O(buffers x d) update (`_add_one`, 200 rounds) of which 1.4 s "
        "drawing the exact discrete noise (`_exact.py` `propose`/`decide`, already "
        "vectorised); the sparse products are under 0.3 s.",
        "* Measured alternatives at 2^17 (seed 0, not defaults): `ftrl` with "
        "`mechanism=\"tree\"` 0.50x at epsilon = inf (accuracy unchanged, 0.616); "
        "`ftrl-momentum` with rounds of 2,000 rows 0.57x / accuracy 0.666, of 1,000 "
        "rows 0.24x (BLT) or 0.85x (tree) / accuracy 0.675 at epsilon = inf. At "
        "epsilon = 1 the tree with exact discrete noise falls to 431 rows/s: a profile "
        "shows the exact sampler's Python-integer fallback (`_discrete.py` "
        "`discrete_gaussian`, one coordinate at a time: 262,146 draws for 4,000 rows), "
        "taken where the noise scale in grid units is outside the vectorised "
        "sampler's range. No auto rule is changed here.",
        "* Sparse input is never made dense: at d = 2^17 the estimators' peak is tens of "
        "MB (their d-vectors: model, prefix-sum state).",
        "* Adult: the sparse pipeline gives the dense pipeline's accuracy (the model "
        "equals the dense input's up to float rounding) and fits faster.",
    ]
    if only and out is None:
        return
    out = OUT if out is None else out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
