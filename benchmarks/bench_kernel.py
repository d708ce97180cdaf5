"""KernelPrivateOnlineRegressor against its peers on a non-linear stream.

Data: ``sklearn.datasets.make_friedman1(n_samples=55_000, noise=1.0,
random_state=seed)``; the first 50,000 rows train, the last 5,000 test.
Public bounds: y_bound = 30 (friedman1's targets lie in about [-1, 30]),
data_norm = sqrt(10) for every estimator (features in [0, 1]). The kernel
estimator's ``gamma`` is unit-free (its kernel is on x / data_norm, since
7656a98), so the bandwidths 0.25 and 0.5 on the raw rows are passed as
gamma = 2.5 and 5 (times data_norm^2 = 10); ``RBFSampler`` gets the raw 0.25 /
0.5. (Run without data_norm, the estimator read the bound off the rows and the
same gamma meant a ~4x narrower bandwidth: every kernel row fell 0.05-0.19.)

1. Utility at epsilon = 1, delta = 1e-5 (median test R^2 over seeds):
   the kernel estimator (``fit`` and ``partial_fit`` in chunks of 5,000 with
   ``horizon`` = 50,000, the default rounds (``batch_size="auto"``) and rounds
   of 5,000 rows; algorithms "ftl" and "korls" with raw gamma 0.25 and 128
   features, "gd" -- what the default "auto" runs for ``fit`` and for rounds
   of >= 50 rows -- with raw gamma 0.5 and 256 features, and with the other
   setting too), the linear
   ``PrivateOnlineRegressor`` (same protocol), and the non-private
   references on the *same* random features: ``SGDRegressor`` (one pass of
   ``partial_fit`` over the same chunks, and ``fit``) and the estimator at
   epsilon = inf.
2. Speed (same process, interleaved repeats, medians): rows/s of the
   kernel estimator's ``partial_fit`` over rows/s of
   ``SGDRegressor.partial_fit`` on ``RBFSampler`` features (the feature
   map included in both timings), chunks of 5,000; and ``fit`` with noisy
   GD against ``SGDRegressor.fit`` on the same number of features.

Writes docs/benchmarks/kernel.md (not with --quick, unless --out).

    python benchmarks/bench_kernel.py               # full run (~3-6 min, 2 cores)
    python benchmarks/bench_kernel.py --quick --out /tmp/kernel.md
"""

import math
import time
import warnings

from _common import command_line, machine_lines, md_table, parse_report_args, write_report

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import SGDRegressor

from skdpol import KernelPrivateOnlineRegressor, PrivacyLeakWarning, PrivateOnlineRegressor

Y_BOUND, CHUNK = 30.0, 5_000
DATA_NORM = math.sqrt(10)  # public: friedman1's 10 features lie in [0, 1]
# gamma in unit space (rows / DATA_NORM): 0.25 and 0.5 on the raw rows
GAMMA = 0.25 * DATA_NORM**2
GD = dict(algorithm="gd", gamma=0.5 * DATA_NORM**2, n_components=256)  # noisy GD's setting


def _data(seed, n_train):
    X, y = make_friedman1(n_samples=n_train + 5_000, noise=1.0, random_state=seed)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def _stream(est, X, y):
    for start in range(0, X.shape[0], CHUNK):
        est.partial_fit(X[start:start + CHUNK], y[start:start + CHUNK])
    return est


def _utility(seeds, n_train, epsilon):
    scores = {}

    def record(name, value):
        scores.setdefault(name, []).append(value)

    for seed in seeds:
        X, y, Xt, yt = _data(seed, n_train)
        common = dict(y_bound=Y_BOUND, gamma=GAMMA, data_norm=DATA_NORM, random_state=seed)
        for algorithm in ("ftl", "korls"):
            k = dict(common, algorithm=algorithm)
            record(f"kernel {algorithm} fit", KernelPrivateOnlineRegressor(
                epsilon=epsilon, **k).fit(X, y).score(Xt, yt))
            record(f"kernel {algorithm} partial_fit", _stream(KernelPrivateOnlineRegressor(
                epsilon=epsilon, horizon=n_train, **k), X, y).score(Xt, yt))
            record(f"kernel {algorithm} fit, epsilon=inf", KernelPrivateOnlineRegressor(
                epsilon=np.inf, **k).fit(X, y).score(Xt, yt))
        record("kernel ftl partial_fit, batch_size=5000", _stream(KernelPrivateOnlineRegressor(
            epsilon=epsilon, horizon=n_train, batch_size=CHUNK, algorithm="ftl", **common),
            X, y).score(Xt, yt))
        gd = dict(common, **GD)
        record("kernel gd fit (gamma=5, 256 features)", KernelPrivateOnlineRegressor(
            epsilon=epsilon, **gd).fit(X, y).score(Xt, yt))
        record("kernel gd fit (gamma=2.5, 128 features)", KernelPrivateOnlineRegressor(
            epsilon=epsilon, algorithm="gd", **common).fit(X, y).score(Xt, yt))
        record("kernel gd partial_fit, batch_size=5000 (gamma=5, 256 features)", _stream(
            KernelPrivateOnlineRegressor(epsilon=epsilon, batch_size=CHUNK, **gd), X, y
        ).score(Xt, yt))
        record("kernel gd partial_fit, batch_size=1000 (gamma=5, 256 features)", _stream(
            KernelPrivateOnlineRegressor(epsilon=epsilon, batch_size=1000, **gd), X, y
        ).score(Xt, yt))
        lin = dict(data_norm=DATA_NORM, y_bound=Y_BOUND, random_state=seed)
        record("linear PrivateOnlineRegressor fit", PrivateOnlineRegressor(
            epsilon=epsilon, **lin).fit(X, y).score(Xt, yt))
        record("linear PrivateOnlineRegressor partial_fit", _stream(PrivateOnlineRegressor(
            epsilon=epsilon, horizon=n_train, **lin), X, y).score(Xt, yt))
        record("linear PrivateOnlineRegressor partial_fit, batch_size=5000", _stream(
            PrivateOnlineRegressor(epsilon=epsilon, horizon=n_train, batch_size=CHUNK, **lin),
            X, y).score(Xt, yt))
        for label, params in (("", common), (" (gamma=5, 256 features)", gd)):
            features = KernelPrivateOnlineRegressor(**params).fit(X[:10], y[:10]).random_features_
            F, Ft = features.transform(X), features.transform(Xt)
            sgd = SGDRegressor(random_state=seed)
            for start in range(0, n_train, CHUNK):
                sgd.partial_fit(F[start:start + CHUNK], y[start:start + CHUNK])
            record(f"SGDRegressor partial_fit, same features{label} (non-private)",
                   sgd.score(Ft, yt))
            record(f"SGDRegressor fit, same features{label} (non-private)",
                   SGDRegressor(random_state=seed).fit(F, y).score(Ft, yt))
    return [[name, f"{np.median(v):.3f}", f"[{np.percentile(v, 25):.3f}, "
             f"{np.percentile(v, 75):.3f}]"] for name, v in scores.items()]


def _speed(repeats, n_train):
    X, y, _, _ = _data(0, n_train)

    def ours(algorithm, n_components):
        batch = CHUNK if algorithm == "gd" else 1
        return lambda: _stream(KernelPrivateOnlineRegressor(
            y_bound=Y_BOUND, gamma=GAMMA, data_norm=DATA_NORM, algorithm=algorithm,
            n_components=n_components,
            batch_size=batch, random_state=0), X, y)

    def sgd(n_components):
        def run():
            sampler = RBFSampler(gamma=GAMMA / DATA_NORM**2, n_components=n_components,
                                 random_state=0)
            sampler.fit(X[:1])  # draws its weights from the shape of X only
            model = SGDRegressor(random_state=0)
            for start in range(0, n_train, CHUNK):
                model.partial_fit(sampler.transform(X[start:start + CHUNK]),
                                  y[start:start + CHUNK])
        return run

    def ours_fit():
        KernelPrivateOnlineRegressor(y_bound=Y_BOUND, data_norm=DATA_NORM, random_state=0,
                                     **GD).fit(X, y)

    def sgd_fit():
        sampler = RBFSampler(gamma=GD["gamma"] / DATA_NORM**2, n_components=GD["n_components"],
                             random_state=0)
        SGDRegressor(random_state=0).fit(sampler.fit_transform(X), y)

    cases = [(f"{alg} partial_fit, n_components={D}" + (f", batch_size={CHUNK}" if alg == "gd"
                                                         else ""), ours(alg, D), sgd(D))
             for alg, D in (("ftl", 128), ("korls", 128), ("korls", 512), ("gd", 256))]
    cases.append(("gd fit, n_components=256 (against SGDRegressor.fit)", ours_fit, sgd_fit))
    rows = []
    for name, run_ours, run_sgd in cases:
        t_ours, t_sgd = [], []
        for _ in range(repeats):
            for target, fn in ((t_ours, run_ours), (t_sgd, run_sgd)):
                start = time.perf_counter()
                fn()
                target.append(time.perf_counter() - start)
        rows.append([name, f"{n_train / np.median(t_ours):,.0f}",
                     f"{n_train / np.median(t_sgd):,.0f}",
                     f"{np.median(t_sgd) / np.median(t_ours):.2f}x"])
    return rows


def main():
    args = parse_report_args(__doc__)
    warnings.simplefilter("ignore", PrivacyLeakWarning)
    seeds, n_train, repeats = (range(2), 10_000, 2) if args.quick else (range(5), 50_000, 5)
    utility = _utility(seeds, n_train, 1.0)
    speed = _speed(repeats, n_train)
    text = "\n".join([
        "# KernelPrivateOnlineRegressor on friedman1",
        "",
        f"Measured by `{command_line('bench_kernel.py')}`; set-up in the docstring of",
        "`benchmarks/bench_kernel.py`.",
        "",
        *machine_lines(),
        "",
        f"## Test R^2 at epsilon = 1, delta = 1e-5 ({n_train:,} training rows, "
        f"{len(seeds)} seeds, median [IQR])",
        "",
        md_table(["model", "R^2", "IQR"], utility),
        "",
        f"## Speed: `partial_fit` in chunks of {CHUNK:,} and `fit`, feature map included",
        "",
        md_table(["kernel estimator", "ours rows/s",
                  "SGDRegressor + RBFSampler rows/s", "ours / SGD"], speed),
        "",
    ])
    write_report(text, args, "kernel.md")


if __name__ == "__main__":
    main()
