"""The Huber ``ftrl-momentum`` stream's step rule and averaging tail (issue 31's bar).

Issue 31's first bar: one pass of ``partial_fit`` at epsilon 1 (chunks of
1,000, horizon = the training rows, delta 1e-6) reaches the R^2 of ``fit`` at
epsilon 0.5. This script compares, paired on the same seeds and splits, the
regressor's default stream with

* ``old step``: the step's noise rule before this change, max(1, r / 0.2)
  instead of sqrt(1 + (r / 0.2)^2) (:func:`skdpol.online._step_noise.noise_step_scale`);
* ``tail 0.7``: the Huber averaging's tail before this change (now 0.6,
  ``skdpol.online._momentum.HUBER_TAIL``);

on King County and wine through their shipped schemas, at epsilon 0.5, 1, 2
and inf. Constants are chosen away from the acceptance bench's test splits
(``bench_stream.py``, seeds 0-19): ``--seeds 100-119`` takes other random
splits, ``--validation`` carves 20 % of each training split (seeds 0-19) as
the scored rows. Cells: median of the paired change in test R^2 against the
shipped default, and the share of seeds it is above.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_momentum_noise_rule.py \\
        --seeds 100-119
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_momentum_noise_rule.py \\
        --seeds 0-19 --validation
"""

import argparse
import contextlib
import math
import warnings

import numpy as np
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from proto_streams import DELTA, chunks, load_tables, split
import skdpol.online._momentum as momentum
import skdpol.online._step_noise as step_noise
from skdpol import PrivateOnlineRegressor
from skdpol.datasets import data_home


def _old_scale(n_features, noise_ratio, horizon_rows, n_rounds, *, base_divisor=50.0):
    """The rule before: max(1, min(r / 0.2, cap))."""
    if horizon_rows is None or not noise_ratio > 0 or n_rounds < step_noise.NOISE_MIN_ROUNDS:
        return 1.0
    cut = n_features * noise_ratio**2 / horizon_rows / step_noise.NOISE_RATIO_FREE
    cap = max(step_noise.NOISE_CAP * noise_ratio / base_divisor, math.sqrt(cut))
    return max(1.0, min(cut, cap))


@contextlib.contextmanager
def variant(old_step=False, tail=None):
    saved = momentum.noise_step_scale, momentum.HUBER_TAIL
    if old_step:
        momentum.noise_step_scale = _old_scale
    if tail is not None:
        momentum.HUBER_TAIL = tail
    try:
        yield
    finally:
        momentum.noise_step_scale, momentum.HUBER_TAIL = saved


VARIANTS = {"default": {}, "old step": dict(old_step=True), "tail 0.7": dict(tail=0.7),
            "tail 0.5": dict(tail=0.5),
            "old step, tail 0.7 (before)": dict(old_step=True, tail=0.7)}


def one_pass(table, Xtr, ytr, Xte, yte, eps, seed):
    n = Xtr.shape[0]
    est = PrivateOnlineRegressor(epsilon=eps, delta=DELTA, data_norm=table["data_norm"],
                                 y_bound=table["y_bound"], horizon=n, random_state=seed)
    for lo, hi in chunks(n):
        est.partial_fit(Xtr[lo:hi], ytr[lo:hi])
    return r2_score(yte, est.predict(Xte))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="100-119")
    ap.add_argument("--validation", action="store_true")
    ap.add_argument("--tables", default="kc,wine")
    ap.add_argument("--epsilons", default="0.5,1,2,inf")
    args = ap.parse_args()
    lo, hi = (int(s) for s in args.seeds.split("-"))
    names = args.tables.split(",")
    tables = load_tables(names, data_home())
    print("| table | epsilon | variant | median R^2 | paired change (median) | seeds above |")
    print("|---|---|---|---|---|---|")
    for name in names:
        for eps in (float(e) for e in args.epsilons.split(",")):
            scores = {v: [] for v in VARIANTS}
            for seed in range(lo, hi + 1):
                Xtr, ytr, Xte, yte = split(tables[name], seed)
                if args.validation:
                    Xtr, Xte, ytr, yte = train_test_split(Xtr, ytr, test_size=0.2,
                                                          random_state=1000 + seed)
                for v, kw in VARIANTS.items():
                    with variant(**kw), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        scores[v].append(one_pass(tables[name], Xtr, ytr, Xte, yte, eps, seed))
            base = np.array(scores["default"])
            for v, s in scores.items():
                s = np.array(s)
                print(f"| {name} | {eps:g} | {v} | {np.median(s):.4f} | "
                      f"{np.median(s - base):+.4f} | {np.mean(s > base):.2f} |", flush=True)


if __name__ == "__main__":
    main()
