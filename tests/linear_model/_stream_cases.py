"""The small stream shared by the flush and release_every tests: three
estimators on the same 3-feature rows (imported by those test files)."""

import numpy as np

from skdpol import KernelPrivateOnlineRegressor, PrivateOnlineLogistic, PrivateOnlineRegressor

ESTIMATORS = ("reg", "log", "kernel")


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=n)


def _make(kind, **params):
    """(estimator, its partial_fit keyword arguments)."""
    params = {"data_norm": 4.0, "random_state": 0, **params}
    if kind == "reg":
        return PrivateOnlineRegressor(y_bound=8.0, **params), {}
    if kind == "log":
        return PrivateOnlineLogistic(**params), {"classes": [0, 1]}
    return KernelPrivateOnlineRegressor(y_bound=8.0, n_components=16, **params), {}
