"""Wide rows (issue 32 item 2): a d x d algorithm chosen explicitly at a width
whose d x d sums would not fit gets a clear error, not numpy's MemoryError."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.linear_model._algorithms import MAX_SUFFICIENT_STATISTIC_BYTES, check_width

# one d x d float64 matrix of more than 2 GB: 16,384 columns is the last width allowed
WIDE = 20_000


def _rows(n=40, d=WIDE, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=5 / d, format="csr", random_state=seed)
    X.data /= 10.0
    return X, rng.normal(size=n)


def test_threshold_is_documented_width():
    # 16,384 columns (intercept included) is exactly 2 GB: allowed; one more is refused
    assert 8 * 16_384 ** 2 == MAX_SUFFICIENT_STATISTIC_BYTES
    check_width("ftl", 16_384)
    check_width("ftrl", 10**7)  # first-order: never refused
    with pytest.raises(ValueError, match="n_features=16385"):
        check_width("ls", 16_385)


@pytest.mark.parametrize("method", ["partial_fit", "fit"])
def test_regressor_ftl_too_wide(method):
    X, y = _rows()
    est = PrivateOnlineRegressor(algorithm="ftl", epsilon=1.0, data_norm=1.0, y_bound=4.0,
                                 horizon=100, random_state=0)
    with pytest.raises(ValueError, match=r"algorithm='ftl'.*n_features=20001.*ftrl-momentum"):
        getattr(est, method)(X, y)
    assert not hasattr(est, "coef_")  # state unchanged
    assert not hasattr(est, "n_features_in_")


@pytest.mark.parametrize("method", ["partial_fit", "fit"])
def test_classifier_ls_too_wide(method):
    X, y = _rows()
    y = (y > 0).astype(int)
    est = PrivateOnlineLogistic(algorithm="ls", epsilon=1.0, data_norm=1.0, horizon=100,
                                random_state=0)
    with pytest.raises(ValueError, match=r"algorithm='ls'.*n_features=20001.*\"ftrl\""):
        getattr(est, method)(X, y, classes=[0, 1])
    assert not hasattr(est, "coef_")
    assert not hasattr(est, "n_features_in_")


@pytest.mark.filterwarnings("ignore:no round")
def test_first_order_and_auto_at_that_width():
    # "auto" falls back to an O(d) stream; an explicit ftrl-momentum runs
    X, y = _rows()
    clf = PrivateOnlineLogistic(epsilon=1.0, data_norm=1.0, horizon=100, random_state=0)
    clf.partial_fit(X, (y > 0).astype(int), classes=[0, 1])
    assert clf.algorithm_ == "ftrl-momentum"  # the wide classifier rule (registry)
    reg = PrivateOnlineRegressor(algorithm="ftrl-momentum", epsilon=1.0, data_norm=1.0,
                                 y_bound=4.0, horizon=100, random_state=0)
    reg.partial_fit(X, y)
    assert reg.coef_.shape == (WIDE,)
