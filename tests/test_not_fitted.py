"""Reading privacy_spent_ before anything is published: scikit-learn's NotFittedError."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
    PrivateSubmodularSelector,
)

ESTIMATORS = [
    (PrivateOnlineRegressor(data_norm=2.0, y_bound=2.0, random_state=0), "regression"),
    (PrivateOnlineLogistic(data_norm=2.0, random_state=0), "classification"),
    (KernelPrivateOnlineRegressor(data_norm=2.0, y_bound=2.0, random_state=0), "regression"),
    (PrivateSubmodularSelector(n_items=3, cost_bound=2.0, random_state=0), "selection"),
]


@pytest.mark.parametrize("est, task", ESTIMATORS, ids=[type(e).__name__ for e, _ in ESTIMATORS])
def test_privacy_spent_before_fitting_raises_not_fitted(est, task):
    with pytest.raises(NotFittedError, match=f"This {type(est).__name__} has published "
                                             "nothing yet.*privacy_spent_"):
        est.privacy_spent_
    assert not hasattr(est, "privacy_spent_")  # NotFittedError is an AttributeError
    X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(40, 3))
    if task == "regression":
        est.fit(X, X[:, 0])
    elif task == "classification":
        est.fit(X, (X[:, 0] > 0).astype(int), classes=[0, 1])
    else:
        est.fit(X)
    assert 0 < est.privacy_spent_.epsilon <= est.epsilon + 1e-9


def test_other_missing_attributes_stay_plain_attribute_errors():
    est = PrivateOnlineRegressor()
    with pytest.raises(AttributeError, match="has no attribute 'coef_'") as info:
        est.coef_
    assert not isinstance(info.value, NotFittedError)
