"""Why the regressor's default stream lost at d = 1,000 (issue 32 item 2): R^2
of ``PrivateOnlineRegressor.partial_fit`` on bench_wide.py's rows with one
knob of ``MomentumFTRL`` changed at a time (step divisor, momentum,
averaging tail, rounds, residual_bound), with the step's noise rule on or off.

Not a benchmark of the defaults (bench_wide.py is): a diagnostic, which
overrides ``MomentumFTRL``'s keyword arguments for the run. Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/diag_wide_regressor.py \\
        --d 1000 --epsilon 1 --seeds 1 \\
        --grid "[dict(step_divisor=s) for s in (50, 100, 200, 400)]" [--no-rule]

Each grid entry is a dict of ``MomentumFTRL`` keyword arguments, plus
``batch_size`` and ``residual_bound`` for the estimator. Prints one line
per entry: the entry, R^2 per seed, the mean, and the step divisor used.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from sklearn.linear_model import SGDRegressor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_wide import make_rows  # noqa: E402

import skdpol.online._momentum as momentum  # noqa: E402
import skdpol.online._step_noise as step_noise  # noqa: E402
from skdpol import PrivateOnlineRegressor  # noqa: E402


def one_pass(d, n, seed, epsilon, chunk, batch_size="auto", residual_bound=0.125,
             mechanism="auto", **knobs):
    rng = np.random.default_rng(seed)
    X, y = make_rows(n + 5_000, d, d == 2**17, rng)  # 2^17: bench_wide.py's CSR rows
    original = momentum.MomentumFTRL.__init__

    def patched(self, **kwargs):
        kwargs.update(knobs)
        original(self, **kwargs)

    momentum.MomentumFTRL.__init__ = patched
    try:
        est = PrivateOnlineRegressor(epsilon=epsilon, data_norm=1.0, y_bound=4.0, horizon=n,
                                     random_state=seed, batch_size=batch_size,
                                     residual_bound=residual_bound, mechanism=mechanism)
        t0 = time.process_time()
        for lo in range(0, n, chunk):
            est.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk])
        elapsed = time.process_time() - t0
    finally:
        momentum.MomentumFTRL.__init__ = original
    algo = est._stream.algorithm
    divisor = algo.batch_size / (algo.learning_rate * algo.row_bound**2)
    return est.score(X[n:], y[n:]), divisor, n / elapsed, algo.batch_size


def sgd_rate(d, n, seed, chunk):
    """Rows per CPU second of SGDRegressor.partial_fit on the same rows (and its R^2)."""
    rng = np.random.default_rng(seed)
    X, y = make_rows(n + 5_000, d, d == 2**17, rng)
    sgd = SGDRegressor(random_state=seed)
    t0 = time.process_time()
    for lo in range(0, n, chunk):
        sgd.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk])
    return n / (time.process_time() - t0), sgd.score(X[n:], y[n:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--d", type=int, default=1_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=10_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--grid", default="[{}]")
    parser.add_argument("--no-rule", action="store_true",
                        help="switch the step's noise rule off (the step b / (50 R~^2))")
    parser.add_argument("--sgd", action="store_true",
                        help="also time SGDRegressor.partial_fit on the same rows")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.no_rule:
        step_noise.NOISE_RATIO_FREE = float("inf")
    if args.sgd:
        sgd = [sgd_rate(args.d, args.rows, seed, args.chunk) for seed in range(args.seeds)]
        print(f"d={args.d} SGD rate {[round(r) for r, _ in sgd]} "
              f"R^2 {np.round([s for _, s in sgd], 3)}", flush=True)
    for knobs in eval(args.grid):  # a trusted command-line expression
        runs = [one_pass(args.d, args.rows, seed, args.epsilon, args.chunk, **knobs)
                for seed in range(args.seeds)]
        scores = [r[0] for r in runs]
        print(f"d={args.d} epsilon={args.epsilon:g} {knobs} R^2 {np.round(scores, 3)} "
              f"mean {np.mean(scores):.3f} divisor {runs[-1][1]:.1f} rows a round "
              f"{runs[-1][3]} rate {[round(r[2]) for r in runs]}", flush=True)


if __name__ == "__main__":
    main()
