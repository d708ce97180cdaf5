"""scikit-learn's estimator checks, with no expected failures."""

import warnings

from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivacyLeakWarning,
    PrivateSubmodularSelector,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
)
from skdpol.distributed import MultiPartyPrivateSGD
from skdpol.model_selection import PrivateHyperparameterSearch
from skdpol.preprocessing import PrivateStandardScaler, PublicRangeScaler

ESTIMATORS = [
    PrivateOnlineRegressor(),  # defaults: bounds read off the data (warns)
    PrivateOnlineRegressor(data_norm=5.0, y_bound=5.0, delta=0.0),  # pure DP path
    PrivateOnlineLogistic(),  # defaults (ls stream; fit = noisy GD); warns about bounds and classes
    PrivateOnlineLogistic(data_norm=5.0, algorithm="ftrl"),  # the first-order stream
    PrivateOnlineLogistic(data_norm=5.0, delta=0.0, batch_size=1),  # pure DP, per-row
    PrivateOnlineLogistic(data_norm=5.0, algorithm="igd"),
    PrivateOnlineLogistic(data_norm=5.0, algorithm="mi-ogd"),
    # DP-FTRL with momentum (the regressor's default stream), explicitly: fit and streams
    PrivateOnlineRegressor(data_norm=5.0, y_bound=5.0, algorithm="ftrl-momentum"),
    PrivateOnlineLogistic(data_norm=5.0, algorithm="ftrl-momentum"),
    PrivateOnlineLogistic(data_norm=5.0, algorithm="ls"),  # its fit: one release of the sums
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
    # seed 004 on numpy input (one party; in-process)
    MultiPartyPrivateSGD(),  # defaults: squared error, bounds read off the data (warns)
    MultiPartyPrivateSGD(loss="log_loss", data_norm=5.0, trust_model="secure-aggregation"),
    # private model selection: a bare classifier with defaults (bounds and label set
    # read off the data, warned once), a regressor, a Pipeline with a public first step
    PrivateHyperparameterSearch(PrivateOnlineLogistic(), {"alpha": [1e-3, 1e-1]},
                                mean_runs=2, random_state=0),
    PrivateHyperparameterSearch(PrivateOnlineRegressor(data_norm=5.0, y_bound=5.0),
                                {"algorithm": ["ftl", "igd"]}, mean_runs=2, random_state=0),
    PrivateHyperparameterSearch(
        make_pipeline(PublicRangeScaler(bounds=(-5.0, 5.0)), PrivateOnlineLogistic(data_norm=3.0)),
        {"privateonlinelogistic__algorithm": ["igd", "noisy-gd"]}, mean_runs=2, random_state=0),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)
