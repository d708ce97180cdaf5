"""Audits of the gradient family: every algorithm, continual release and fit.

Each audit trains on two neighbouring streams (the canary row replaced by
one with the opposite label) many times and lower-bounds epsilon from the
released models (:func:`skdpol.audit.epsilon_lower_bound`). The claim must
not be refuted; the same mechanism with a tenth of the noise must be, or the
audit has no power. The estimator is audited end to end for the default
algorithms (the ls and ftrl streams, noisy-GD ``fit``) and POL's ``fit``; the other algorithms are audited on the algorithm
objects the estimator builds (``make_stream``, same calibration), which is
~30x faster than going through scikit-learn's validation on every call.

The claim is epsilon = 2 (delta = 1e-5): a logistic gradient moves by at
most |l'| <= 1 times the row, but a canary can only shift it by about half
of that at a fresh model (|l'(0)| = 1/2), so at epsilon = 1 a tenfold cut
leaves too little signal for 1000 runs to see.
"""

import numpy as np
import pytest

from skdpol import PrivateOnlineLogistic
from skdpol.audit import audit_estimator, epsilon_lower_bound
from skdpol.losses import LogisticLoss
from skdpol.mechanisms import NoiseSpec
from skdpol.online import make_stream

EPSILON, DELTA = 2.0, 1e-5


def _setting(n=8, index=0, d=2):
    # all rows but the canary's are zero, so only the canary's label moves
    # the gradients; the canary row e1 also reads the model directly
    X, y = np.zeros((n, d)), np.zeros(n, dtype=int)
    X[index, 0] = 1.0
    return X, y, X[index].copy(), 1


ESTIMATOR_CASES = {
    "default stream (ls) partial_fit": (dict(), "partial_fit"),
    "ftal partial_fit, delta=0": (dict(algorithm="ftal", delta=0.0), "partial_fit"),
    "fit (POL)": (dict(algorithm="ftal"), "fit"),
    "fit (noisy GD, the default)": (dict(), "fit"),
    "fit (noisy GD), discrete noise": (dict(noise_sampler="discrete"), "fit"),
    "ftrl partial_fit, discrete noise": (dict(algorithm="ftrl", noise_sampler="discrete"),
                                         "partial_fit"),
    "fit (POL), discrete noise": (dict(algorithm="ftal", noise_sampler="discrete"), "fit"),
    "ftrl partial_fit, BLT prefix sums": (dict(algorithm="ftrl", mechanism="blt"),
                                          "partial_fit"),
}


# the default run keeps the default stream, noisy-GD fit, POL fit and BLT; the
# other variants run with -m slow
SLOW_ESTIMATOR_CASES = {'ftal partial_fit, delta=0', 'fit (noisy GD), discrete noise', 'ftrl partial_fit, discrete noise', 'fit (POL), discrete noise'}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_ESTIMATOR_CASES else c
                                  for c in ESTIMATOR_CASES])
def test_estimator_audit(case, audit_runs, weakened_noise):
    extra, method = ESTIMATOR_CASES[case]
    X, y, cx, cy = _setting()
    params = dict(epsilon=EPSILON, delta=DELTA, data_norm=1.0, alpha=0.5, batch_size=1,
                  horizon=len(X), fit_intercept=False)
    params.update(extra)
    fit_params = dict(classes=[0, 1])
    honest = audit_estimator(PrivateOnlineLogistic(**params), X, y, cx, cy,
                             method=method, n_runs=audit_runs, fit_params=fit_params)
    assert honest.epsilon_claimed <= EPSILON + 1e-9
    assert not honest.refuted, honest
    with weakened_noise(0.1):  # deliberately broken: a tenth of the calibrated noise
        cut = audit_estimator(PrivateOnlineLogistic(**params), X, y, cx, cy, method=method,
                              n_runs=audit_runs, epsilon_claimed=EPSILON,
                              fit_params=fit_params)
    assert cut.refuted, cut


# GIGA's first round is a warm-up that reads no row (alpha = 1, row bound 1:
# t_q = ceil(1.25 / 1 + 1/2) = 2), so its canary is row 1
# One release right after the canary: POCP calibrates for the horizon's
# releases, so a stream that ends at the canary puts the whole budget on it
# (alpha = 5 keeps the noise well inside the ball, so projection does not
# mask it); MI-OGD's later rows would only add their own noise. The bandit
# audit uses one feature: the sphere of R^1 is {-1, +1}, so the released
# vectors form two clean branches instead of a blur over random directions.
ALGORITHM_CASES = {
    "ftal": (dict(algorithm="ftal", alpha=0.5), 0, 2),
    "igd": (dict(algorithm="igd", alpha=5.0), 0, 2),
    "giga": (dict(algorithm="giga", alpha=5.0), 1, 2),
    "mi-ogd full": (dict(algorithm="mi-ogd", alpha=0.5), 0, 2),
    "mi-ogd bandit": (dict(algorithm="mi-ogd", alpha=0.5, feedback="bandit"), 0, 1),
}


def _algorithm_statistics(params, X, y, canary, index, n_runs, seed0):
    """The released model's score at the canary, right after the canary's round."""
    out = np.empty(n_runs)
    for i in range(n_runs):
        stream = make_stream(
            params["algorithm"], loss=LogisticLoss(), n_features=X.shape[1],
            radius=LogisticLoss().optimum_radius(params["alpha"]), alpha=params["alpha"],
            row_bound=1.0, batch_size=1, horizon=len(X), epsilon=EPSILON, delta=DELTA,
            noise=NoiseSpec(), calibration="tight", feedback=params.get("feedback", "full"),
            rng=np.random.default_rng(seed0 + i))
        stream.learn(X, y)
        out[i] = float(stream.published[0] @ canary)
    return out


# the default run keeps FTAL and full-feedback MI-OGD; the others run with -m slow
SLOW_ALGORITHM_CASES = {'igd', 'giga', 'mi-ogd bandit'}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_ALGORITHM_CASES else c
                                  for c in ALGORITHM_CASES])
def test_algorithm_audit(case, audit_runs, weakened_noise):
    params, index, d = ALGORITHM_CASES[case]
    X, _, canary, _ = _setting(n=index + 1, index=index, d=d)
    y = np.full(len(X), -1.0)  # encoded labels: the canary flips row index to +1
    y_prime = y.copy()
    y_prime[index] = 1.0
    for factor, should_refute in ((1.0, False), (0.1, True)):
        with weakened_noise(factor):  # 0.1: a tenth of the calibrated noise
            a = _algorithm_statistics(params, X, y, canary, index, audit_runs, 0)
            b = _algorithm_statistics(params, X, y_prime, canary, index, audit_runs,
                                      audit_runs)
        eps, _ = epsilon_lower_bound(a, b, DELTA)
        if should_refute:
            assert eps > EPSILON, (case, eps)
        else:
            assert eps <= EPSILON, (case, eps)
