"""A PrivacyLeakWarning names the user's line, not a line inside skdpol or scikit-learn."""

import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivacyLeakWarning,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
)
from skdpol.distributed import MultiPartyPrivateSGD
from skdpol.preprocessing import PrivateStandardScaler

X = np.random.default_rng(0).normal(size=(200, 3))
Y = X[:, 0]


@pytest.mark.parametrize("call", [
    lambda: PrivateOnlineRegressor(y_bound=3.0, random_state=0).fit(X, Y),
    lambda: PrivateOnlineRegressor(data_norm=3.0, random_state=0).partial_fit(X, Y),
    lambda: PrivateOnlineLogistic(data_norm=3.0, random_state=0).fit(X, Y > 0),
    lambda: KernelPrivateOnlineRegressor(data_norm=3.0, random_state=0).fit(X, Y),
    lambda: PrivateStandardScaler(random_state=0).fit(X),
    lambda: MultiPartyPrivateSGD(y_bound=3.0, n_rounds=5, random_state=0).fit(X, Y),
    lambda: make_pipeline(PrivateStandardScaler(bounds=(-5.0, 5.0), random_state=0),
                          PrivateOnlineRegressor(y_bound=3.0, random_state=0)).fit(X, Y),
], ids=["regressor fit", "regressor partial_fit", "logistic", "kernel", "scaler",
        "seed 004", "pipeline"])
def test_a_leak_warning_points_at_the_callers_line(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert leaks, "the call was meant to warn"
    assert {w.filename for w in leaks} == {__file__}
