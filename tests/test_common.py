"""scikit-learn's estimator checks, with no expected failures."""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivacyLeakWarning,
    PrivateSubmodularSelector,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
)
from skdpol.preprocessing import PrivateStandardScaler, PublicRangeScaler

ESTIMATORS = [
    PrivateOnlineRegressor(),  # defaults: bounds read off the data (warns)
    PrivateOnlineRegressor(data_norm=5.0, y_bound=5.0, delta=0.0),  # pure DP path
    PrivateOnlineLogistic(),  # defaults (FTAL; fit = POL); warns about bounds and classes
    PrivateOnlineLogistic(data_norm=5.0, delta=0.0, batch_size=1),  # pure DP, per-row
    PrivateOnlineLogistic(data_norm=5.0, algorithm="igd"),
    PrivateOnlineLogistic(data_norm=5.0, algorithm="mi-ogd"),
    # the hardened sampling path
    PrivateOnlineRegressor(data_norm=5.0, y_bound=5.0, noise_sampler="discrete"),
    PrivateOnlineLogistic(data_norm=5.0, noise_sampler="discrete"),
    KernelPrivateOnlineRegressor(),  # defaults: y_bound read off the data (warns)
    KernelPrivateOnlineRegressor(y_bound=5.0, algorithm="korls", n_components=16),
    KernelPrivateOnlineRegressor(y_bound=5.0, algorithm="gd", batch_size=50, n_components=16),
    PrivateSubmodularSelector(random_state=0),
    PrivateSubmodularSelector(feedback="bandit", delta=0.0, random_state=0),
    PrivateStandardScaler(),  # defaults: bounds read off the data (warns)
    PrivateStandardScaler(bounds=(-5.0, 5.0), delta=0.0),  # pure DP (L2-Laplace)
    PublicRangeScaler(bounds=(-5.0, 5.0)),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)
