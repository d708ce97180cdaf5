"""Round sizes of the wide classifier stream: test accuracy and CPU time (issue 32).

The measurements behind the registry's noisy wide rule
(``skdpol/online/_registry.py``: ``WIDE_NOISY_ROUNDS``,
``WIDE_NOISY_COLUMNS_PER_ROW``, ``wide_blt_buffers``): one pass of
``PrivateOnlineLogistic.partial_fit`` (``algorithm="auto"``, a known horizon)
for each round size, epsilon and seed, printed one line a run.

Two data sets: ``--data gen``, the 2^17-column hashed-like rows of
``bench_wide.py`` (``make_rows``; 5,000 held-out rows), and ``--data adult``,
Adult through scikit-learn's ``FeatureHasher`` (``--d`` columns,
``alternate_sign`` at its default): the 6 numeric columns scaled by their
public ranges (``skdpol.datasets.ADULT_RANGES``, log ones on a log scale) to
[-1, 1], one token ``column=value`` per categorical column (none when
missing), ``data_norm=sqrt(14)`` (collisions can exceed it: those rows are
clipped); the file's own split, the training rows in a per-seed order.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_wide_rounds.py --data gen --eps 1 \\
        --bs auto,2000,5000,10000 --seeds 0,1,2,3,4
    OMP_NUM_THREADS=1 python benchmarks/bench_wide_rounds.py --data adult --d 131072 \\
        --eps 1,inf --bs auto,651,1628,3257 --chunk 5000
    # --four: the BLT's default 4 buffers instead of the wide rule's one
"""

import argparse
import math
import time
import warnings

from _common import REPO  # noqa: F401  (puts the checkout first on sys.path)

import numpy as np

from skdpol import PrivateOnlineLogistic


def generated(d, n, seed):
    from bench_wide import make_rows
    X, s = make_rows(n + 5_000, d, True, np.random.default_rng(seed))
    y = (s > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:], 1.0


_ADULT = {}


def _adult_dicts(X):
    from skdpol.datasets._real import ADULT_CATEGORIES, ADULT_RANGES
    cols = {c: X[c].to_numpy() for c in X.columns}
    rows = []
    for i in range(len(X)):
        row = {}
        for c, (lo, hi, log) in ADULT_RANGES.items():
            v = float(cols[c][i])
            u = ((np.log1p(v) - np.log1p(lo)) / (np.log1p(hi) - np.log1p(lo)) if log
                 else (v - lo) / (hi - lo))
            row[c] = 2.0 * min(max(u, 0.0), 1.0) - 1.0
        for c in ADULT_CATEGORIES:
            if isinstance(cols[c][i], str):
                row[f"{c}={cols[c][i]}"] = 1.0
        rows.append(row)
    return rows


def adult(d, seed):
    if d not in _ADULT:
        from sklearn.feature_extraction import FeatureHasher

        from skdpol.datasets import load_adult
        data = load_adult()
        hasher = FeatureHasher(n_features=d)
        _ADULT[d] = (hasher.transform(_adult_dicts(data.X_train)).tocsr(),
                     np.asarray(data.y_train),
                     hasher.transform(_adult_dicts(data.X_test)).tocsr(),
                     np.asarray(data.y_test))
    X, y, X_test, y_test = _ADULT[d]
    order = np.random.default_rng(1000 + seed).permutation(X.shape[0])
    return X[order], y[order], X_test, y_test, math.sqrt(14.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", choices=("gen", "adult"), default="gen")
    parser.add_argument("--d", type=int, default=2**17)
    parser.add_argument("--rows", type=int, default=100_000, help="generated rows")
    parser.add_argument("--eps", default="1")
    parser.add_argument("--bs", default="auto,2000,4000,5000,10000")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--chunk", type=int, default=10_000)
    parser.add_argument("--four", action="store_true",
                        help="the BLT's four buffers instead of the wide rule's one")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.four:
        import skdpol.linear_model._algorithms as algorithms
        algorithms.wide_blt_buffers = lambda rounds: None
    for seed in (int(s) for s in args.seeds.split(",")):
        X, y, X_test, y_test, norm = (generated(args.d, args.rows, seed) if args.data == "gen"
                                      else adult(args.d, seed))
        n = X.shape[0]
        for eps in (float(e) for e in args.eps.split(",")):
            for bs in args.bs.split(","):
                est = PrivateOnlineLogistic(epsilon=eps, data_norm=norm, horizon=n,
                                            random_state=seed,
                                            batch_size=bs if bs == "auto" else int(bs))
                t0 = time.process_time()
                for i, lo in enumerate(range(0, n, args.chunk)):
                    est.partial_fit(X[lo:lo + args.chunk], y[lo:lo + args.chunk],
                                    **({"classes": [0, 1]} if i == 0 else {}))
                cpu = time.process_time() - t0
                tree = est._stream.algorithm._tree
                buffers = getattr(tree, "_enc", np.zeros((0, 0))).shape[0]
                print(f"{args.data} d={args.d} n={n} seed={seed} eps={eps:g} bs={bs} "
                      f"rows={est.batch_size_} mechanism={type(tree).__name__}/{buffers} "
                      f"accuracy={est.score(X_test, y_test):.4f} cpu={cpu:.3f}", flush=True)


if __name__ == "__main__":
    main()
