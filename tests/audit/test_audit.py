"""The empirical audit: valid lower bounds, and power to catch a cut noise."""

import dp_accounting
import numpy as np
import pytest

from skdpol import PrivateOnlineRegressor
from skdpol.audit import audit_estimator, epsilon_lower_bound


def test_lower_bound_is_valid_on_a_gaussian_mechanism_with_known_epsilon():
    # N(0,1) vs N(mu,1) is exactly mu-GDP; its true epsilon at delta is known
    mu, delta = 1.0, 1e-5
    true_eps = dp_accounting.get_epsilon_gaussian(1 / mu, delta)
    bounds = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        eps, _ = epsilon_lower_bound(rng.normal(0, 1, 3000), rng.normal(mu, 1, 3000), delta)
        bounds.append(eps)
    assert max(bounds) <= true_eps
    assert min(bounds) > 0.5  # and not vacuous (the far tail that sets epsilon at
    # delta = 1e-5 is out of reach of 3000 samples, so it sees ~1.5 of 4.4)


def test_lower_bound_is_zero_when_the_samples_are_the_same():
    rng = np.random.default_rng(0)
    eps, _ = epsilon_lower_bound(rng.normal(size=2000), rng.normal(size=2000), 1e-5)
    assert eps < 0.3


def test_lower_bound_rejects_non_finite_statistics():
    with pytest.raises(ValueError, match="finite"):
        epsilon_lower_bound([0.0, np.nan], [1.0, 2.0], 1e-5)


def _setting(n=16):
    # D holds (e1, -1) where D' holds the canary (e1, +1): u moves by 2 e1, the
    # worst case for the label part, and the prediction at e1 reads it directly
    X, y = np.zeros((n, 2)), np.zeros(n)
    X[0], y[0] = [1.0, 0.0], -1.0
    return X, y, np.array([1.0, 0.0]), 1.0


@pytest.mark.parametrize("method, delta", [
    ("fit", 1e-5), ("partial_fit", 1e-5), pytest.param("fit", 0.0, marks=pytest.mark.slow)])
def test_audit_does_not_refute_the_claim_but_refutes_a_cut_noise(method, delta, audit_runs,
                                                                 mechanism_only, weakened_noise):
    X, y, cx, cy = _setting()
    params = dict(epsilon=1.0, delta=delta, data_norm=1.0, y_bound=1.0,
                  horizon=len(X), fit_intercept=False, algorithm="ftl")  # PQFTL's sums
    honest = audit_estimator(PrivateOnlineRegressor(**params), X, y, cx, cy,
                             method=method, n_runs=audit_runs)
    assert honest.epsilon_claimed == pytest.approx(1.0)
    assert not honest.refuted, honest
    with weakened_noise(0.1):  # deliberately broken: a tenth of the calibrated noise
        cut = audit_estimator(PrivateOnlineRegressor(**params), X, y, cx, cy, method=method,
                              n_runs=audit_runs, epsilon_claimed=1.0)
    assert cut.refuted, cut
    assert cut.epsilon_lower_bound > 1.5


@pytest.mark.slow
def test_audit_of_float_leaves_with_a_canary_beyond_the_bound(audit_runs, mechanism_only,
                                                               weakened_noise):
    # rounds of 128 rows: PQFTL sums them in float64 from the caller's rows
    # (D's first round), and a canary beyond data_norm sends its round, in D'
    # only, through a clipped copy: only that round's leaf may move
    X, y, cx, cy = _setting(n=256)
    cx = cx * 10.0
    params = dict(epsilon=1.0, delta=1e-5, data_norm=1.0, y_bound=1.0, horizon=len(X),
                  fit_intercept=False, algorithm="ftl")
    chunks = [128, 128]
    honest = audit_estimator(PrivateOnlineRegressor(**params), X, y, cx, cy,
                             method="partial_fit", chunks=chunks, n_runs=audit_runs)
    assert not honest.refuted, honest
    with weakened_noise(0.1):
        cut = audit_estimator(PrivateOnlineRegressor(**params), X, y, cx, cy,
                              method="partial_fit", chunks=chunks, n_runs=audit_runs,
                              epsilon_claimed=1.0)
    assert cut.refuted, cut
    est = PrivateOnlineRegressor(**params)
    for start in range(0, len(X), 128):
        est.partial_fit(X[start:start + 128], y[start:start + 128])
    assert est._stream.algorithm.float_leaves and est.batch_size_ == 128


def test_audit_of_the_default_fit_noisy_gd_on_the_huber_loss(audit_runs, weakened_noise):
    # fit's default for delta > 0: K noisy gradient steps on clipped residuals
    X, y, cx, cy = _setting()
    params = dict(epsilon=1.0, delta=1e-5, data_norm=1.0, y_bound=1.0, fit_intercept=False,
                  residual_bound=1.0)
    honest = audit_estimator(PrivateOnlineRegressor(**params), X, y, cx, cy, method="fit",
                             n_runs=audit_runs)
    assert not honest.refuted, honest
    with weakened_noise(0.1):  # deliberately broken: a tenth of each step's noise
        cut = audit_estimator(PrivateOnlineRegressor(**params), X, y, cx, cy, method="fit",
                              n_runs=audit_runs, epsilon_claimed=1.0)
    assert cut.refuted, cut


def test_audit_argument_errors():
    X, y, cx, cy = _setting()
    est = PrivateOnlineRegressor(data_norm=1.0, y_bound=1.0)
    with pytest.raises(ValueError, match="method"):
        audit_estimator(est, X, y, cx, cy, method="predict", n_runs=2)
    with pytest.raises(ValueError, match="chunks"):
        audit_estimator(est, X, y, cx, cy, method="partial_fit", chunks=[3], n_runs=2)
