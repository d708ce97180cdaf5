"""Where a wide sparse stream's time goes: CPU time per part, best of K passes.

The 2^17-column classifier of ``bench_wide.py`` (100,000 rows, CSR chunks of
10,000, 30 nonzeros a row, ``PrivateOnlineLogistic`` at its defaults), fed
K + 1 times in one process (the first pass warms the per-process caches:
exact-sampler tables, calibration); each part is timed by wrapping its
function (nested parts are included in their parent's time), and the pass
with the smallest total is printed. Parts missing from a run (the BLT at
epsilon = inf, the tree at epsilon 1) are left out.

``--horizon`` is the estimator's: the rows fed (default), ``none``
(open-ended: the BLT's epochs, four buffers) or a number of rows (past
~1.1 million the stream plans more than 64 rounds: four buffers too).

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/profile_wide_stream.py \\
        [--epsilon 1] [--passes 9] [--horizon none]
"""

import argparse
import collections
import functools
import time
import warnings

import numpy as np

from _common import REPO  # noqa: F401  (puts this checkout first on sys.path)
from bench_wide import _feed, make_rows

import skdpol.linear_model._base as base
import skdpol.linear_model._logistic as logistic
import skdpol.linear_model._streams as streams
import skdpol.linear_model._units as units
import skdpol.mechanisms._blt as blt
import skdpol.mechanisms._tree as tree
import skdpol.online._momentum as momentum
import skdpol.utils._state as state
from skdpol import PrivateOnlineLogistic
from skdpol.utils._sparse import SparseUnitRows

SPENT = collections.defaultdict(float)
PARTS = [  # (owner, attribute, label): labels nest with "/"
    (logistic.PrivateOnlineLogistic, "partial_fit", "partial_fit"),
    (base.PrivateLinearMixin, "_validate_chunk", "partial_fit/validate"),
    (logistic.PrivateOnlineLogistic, "_encode", "partial_fit/labels"),
    (state.Transaction, "__enter__", "partial_fit/transaction"),
    (streams.StreamState, "release", "partial_fit/release"),
    (base.PrivateLinearMixin, "_record_stream", "partial_fit/record"),
    (streams.GradientStream, "learn", "partial_fit/learn"),
    (units, "sparse_lazy_rows", "partial_fit/learn/unit_rows"),
    (momentum.MomentumFTRL, "_round", "partial_fit/learn/rounds"),
    (SparseUnitRows, "matvec", "partial_fit/learn/rounds/margins"),
    (SparseUnitRows, "rmatvec", "partial_fit/learn/rounds/gradient_sums"),
    (blt.BLTPrefixSum, "_add_one", "partial_fit/learn/rounds/blt_step"),
    (blt.BLTPrefixSum, "_draw_noise", "partial_fit/learn/rounds/blt_step/noise"),
    (tree.PrivatePrefixSum, "add", "partial_fit/learn/rounds/tree_add"),
    (tree.PrivatePrefixSum, "shared_release", "partial_fit/learn/rounds/tree_release"),
]


def _timed(owner, name, label):
    real = getattr(owner, name)

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - t0

    setattr(owner, name, wrapper)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--passes", type=int, default=9)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--horizon", default=None,
                        help="the estimator's horizon: none, or rows (default: --rows)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for owner, name, label in PARTS:
        _timed(owner, name, label)
    n = args.rows
    horizon = (n if args.horizon is None else None if args.horizon.lower() == "none"
               else int(args.horizon))
    X, s = make_rows(n, 2**17, True, np.random.default_rng(0))
    y = (s > 0).astype(int)

    def one_pass():
        est = PrivateOnlineLogistic(epsilon=args.epsilon, data_norm=1.0, horizon=horizon,
                                    random_state=0)
        SPENT.clear()
        t0 = time.process_time()
        _feed(est, X, y, 10_000, {"classes": [0, 1]})
        return {**SPENT, "(the pass, chunks sliced too)": time.process_time() - t0}

    one_pass()  # warm the per-process caches
    whole = "(the pass, chunks sliced too)"
    best = min((one_pass() for _ in range(args.passes)), key=lambda r: r[whole])
    print(f"epsilon = {args.epsilon:g}, 2^17 CSR, {n:,} rows, horizon {horizon}: the fastest of "
          f"{args.passes} passes")
    for label in sorted(best):
        print(f"  {label:48s} {1e3 * best[label]:7.1f} ms")


if __name__ == "__main__":
    main()
