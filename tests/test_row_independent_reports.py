"""Warnings, errors and finiteness of every private path do not depend on one row's values.

Warnings and exception messages are part of what an observer sees
(``docs/security.md``). Two neighbouring data sets that differ in one row --
its label or feature made as extreme as a finite float allows (near the
largest float, or subnormal) -- must give the same warnings and the same
errors, for every estimator x algorithm x path (``fit``, ``partial_fit``).
The first finding (issue 29): ``y * (1 / y_bound)`` overflowed outside
``np.errstate`` and warned ``overflow encountered in multiply`` for a label
within a factor ``y_bound`` of the largest float, on the regressor's default
stream, its ``fit``, ``noisy-gd`` and the kernel model.

Each case runs under ``np.errstate(all="warn")`` (every report on, underflow
included) and ``np.errstate(all="raise")``, a user's global choice: an
unguarded overflow would then be a ``FloatingPointError`` for one neighbour
only. The release's finiteness is compared too.
"""

import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
    PrivateSubmodularSelector,
)
from skdpol.distributed import MultiPartyPrivateSGD
from skdpol.model_selection import PrivateHyperparameterSearch
from skdpol.preprocessing import PrivateStandardScaler, PublicRangeScaler, from_schema

N, D = 240, 3
BIG, TINY = np.finfo(float).max, 5e-324  # largest float, smallest subnormal

# (name, value of the replaced row's features, value of its label or None)
NEIGHBOURS = [
    ("label 1e308", None, 1e308),
    ("label -max", None, -BIG),
    ("label subnormal", None, TINY),
    ("feature 1e300", 1e300, None),
    ("features at -max", -BIG, None),  # the row's norm overflows to inf
    ("feature subnormal", TINY, None),
]
REG = dict(epsilon=1.0, delta=1e-6, data_norm=0.5, y_bound=0.5, random_state=0)
CLF = dict(epsilon=1.0, delta=1e-6, data_norm=0.5, random_state=0)

# (factory, kind, paths): kind says how labels look; a path is fit or partial_fit
CASES = {
    "regressor ftl": (lambda: PrivateOnlineRegressor(horizon=N, **REG), "reg"),
    "regressor ftl, batch 1, float": (lambda: PrivateOnlineRegressor(
        horizon=N, batch_size=1, noise_sampler="float", **REG), "reg"),
    "regressor ftl, tree": (lambda: PrivateOnlineRegressor(mechanism="tree", **REG), "reg"),
    "regressor noisy-gd": (lambda: PrivateOnlineRegressor(algorithm="noisy-gd", **REG), "reg"),
    **{f"regressor {a}": (lambda a=a: PrivateOnlineRegressor(
        algorithm=a, horizon=N, batch_size=1, **REG), "reg")
       for a in ("ftrl", "ftal", "igd", "giga", "mi-ogd")},
    **{f"logistic {a}": (lambda a=a: PrivateOnlineLogistic(
        algorithm=a, horizon=N, batch_size=1 if a in ("igd", "giga") else 8, **CLF), "clf")
       for a in ("ftrl", "ftal", "igd", "giga", "mi-ogd", "noisy-gd")},
    "logistic mi-ogd bandit": (lambda: PrivateOnlineLogistic(
        algorithm="mi-ogd", feedback="bandit", horizon=N, batch_size=8, **CLF), "clf"),
    "logistic multiclass": (lambda: PrivateOnlineLogistic(horizon=N, **CLF), "clf3"),
    **{f"kernel {a}": (lambda a=a: KernelPrivateOnlineRegressor(
        algorithm=a, n_components=16, horizon=N, batch_size=8, **REG), "reg")
       for a in ("gd", "ftl", "korls")},
    "selector full": (lambda: PrivateSubmodularSelector(epsilon=1.0, horizon=N,
                                                        random_state=0), "none"),
    "selector bandit": (lambda: PrivateSubmodularSelector(n_items=D, feedback="bandit",
                                                          epsilon=1.0, horizon=N,
                                                          random_state=0), "none"),
    "scaler": (lambda: PrivateStandardScaler(epsilon=1.0, bounds=(-0.5, 0.5),
                                             random_state=0), "none"),
    **{f"seed 004 {p} {loss}": (lambda p=p, loss=loss: MultiPartyPrivateSGD(
        protocol=p, loss=loss, n_rounds=1, noise_sampler="float" if p == "sgd1" else "discrete",
        **(REG if loss == "squared_error" else CLF)),
        "reg" if loss == "squared_error" else "clf")
       for p in ("sgd1", "sgd2") for loss in ("squared_error", "log_loss")},
    **{f"search {scoring}": (lambda scoring=scoring: PrivateHyperparameterSearch(
        PrivateOnlineLogistic(data_norm=0.5), {"alpha": [1e-3, 1e-2]}, mean_runs=3,
        scoring=scoring, random_state=0, **{k: CLF[k] for k in ("epsilon", "delta")}), "clf")
       for scoring in ("brier", "log_loss", "accuracy")},
    # skdpol's public preprocessing runs on the private rows too, outside any transaction
    "pipeline range scaler": (lambda: make_pipeline(
        PublicRangeScaler(bounds=(-0.3, 0.3)),
        PrivateOnlineRegressor(horizon=N, **{**REG, "data_norm": D ** 0.5})), "reg"),
    "pipeline from schema": (lambda: make_pipeline(
        from_schema({"columns": {
            0: {"type": "numeric", "range": [1e-3, 1.0], "transform": "log", "bins": [0.1]},
            1: {"type": "numeric", "range": [-1.0, 1e3], "transform": "signed_log1p"},
            2: {"type": "numeric", "range": [-0.5, 1e3], "transform": "log1p"}}}).preprocessor,
        PrivateOnlineRegressor(horizon=N, **{**REG, "data_norm": 2.0})), "reg"),
    "search regressor": (lambda: PrivateHyperparameterSearch(
        PrivateOnlineRegressor(data_norm=0.5, y_bound=0.5), {"alpha": [1e-3, 1e-2]},
        mean_runs=3, random_state=0, epsilon=1.0, delta=1e-6), "reg"),
}


def _data(kind, n=N):
    rng = np.random.default_rng(1)
    X = rng.uniform(-0.2, 0.2, (n, D))
    if kind == "reg":
        return X, X @ [1.0, -1.0, 0.5]
    if kind == "clf3":
        return X, np.arange(n) % 3
    return X, (np.arange(n) % 2).astype(int)


def _call(factory, kind, path, X, y):
    """What an observer sees of the call: its warnings and its error."""
    est = factory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if kind == "none":
                getattr(est, path)(X)
            elif kind.startswith("clf") and path == "partial_fit":
                est.partial_fit(X, y, classes=np.unique(y))
            else:
                getattr(est, path)(X, y)
            error = None
        except Exception as exc:  # compared, not hidden: both neighbours must match
            error = (type(exc).__name__, str(exc))
    # a release that turns NaN for one neighbour is as visible as a warning
    finite = all(np.all(np.isfinite(np.asarray(getattr(est, name), dtype=float)))
                 for name in ("coef_", "intercept_", "mean_", "scale_") if hasattr(est, name))
    return sorted((w.category.__name__, str(w.message)) for w in caught), error, finite


def _paths(factory):
    est = factory()
    return [p for p in ("fit", "partial_fit") if hasattr(est, p)]


@pytest.mark.parametrize("floating", ["warn", "raise"])
@pytest.mark.parametrize("case", list(CASES))
def test_one_extreme_row_changes_no_warning_and_no_error(case, floating):
    factory, kind = CASES[case]
    # seed 004's SGD1 takes n^2 single-row steps: a shorter table
    X, y = _data(kind, 50 if case.startswith("seed 004") else N)
    n = len(X)
    with np.errstate(all=floating):  # every report on: stricter than numpy's default
        for path in _paths(factory):
            base = _call(factory, kind, path, X, y)
            assert base[1] is None, f"{case} {path} fails on ordinary rows: {base[1]}"
            assert base[2], f"{case} {path} releases a non-finite model on ordinary rows"
            for name, feature, label in NEIGHBOURS:
                if label is not None and kind != "reg":
                    continue  # a class label is not a number to make extreme
                X2, y2 = X.copy(), y.copy()
                if feature is not None:
                    X2[n // 2] = feature
                if label is not None:
                    y2[n // 2] = label
                assert _call(factory, kind, path, X2, y2) == base, (
                    f"{case} {path}: a row with {name} changes what the call reports")


def test_a_partys_computations_report_nothing_on_their_own():
    # On a Dask cluster a party's functions run on a worker, outside the
    # estimator's transaction: they switch numpy's reports off themselves
    from skdpol.distributed import _party

    X = np.full((4, D), BIG)  # squared norms overflow
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = _party.block_summary(X, np.full(4, BIG), True, True, False)
    assert summary["finite"] and summary["max_norm"] == np.inf
