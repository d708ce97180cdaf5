"""Noisy gradient descent on the Huber loss (skdpol.online._noisy_gd)."""

import math
import warnings

import numpy as np
import pytest
from dp_accounting import NoOpDpEvent, SelfComposedDpEvent

from skdpol.accounting import calibrate_noise_multiplier, epsilon_spent
from skdpol.mechanisms import NoiseSpec
from skdpol.online import NoisyGradientDescent, round_event, steps_per_round


def _gd(**kw):
    params = dict(n_features=4, row_bound=1.0, residual_bound=0.5, alpha=0.0, batch_size=500,
                  horizon=None, max_iter=1000, noise=NoiseSpec(),
                  rng=np.random.default_rng(0))
    params.update(kw)
    return NoisyGradientDescent(**params)


def _rows(rng, n, d=4):
    X = rng.normal(size=(n, d))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))


def test_a_replaced_row_moves_a_step_sum_by_at_most_2CR():
    rng = np.random.default_rng(1)
    C, R, worst = 0.5, 1.0, 0.0
    for _ in range(2000):
        X, y, w = _rows(rng, 20), rng.normal(scale=3, size=20), rng.normal(scale=2, size=4)
        X2, y2 = X.copy(), y.copy()
        X2[3], y2[3] = _rows(rng, 1)[0], rng.normal(scale=3)
        def total(A, b):
            return A.T @ np.clip(A @ w - b, -C, C)
        worst = max(worst, np.linalg.norm(total(X, y) - total(X2, y2)) / (2 * C * R))
    assert worst <= 1.0 + 1e-12
    assert worst > 0.9  # the bound is nearly reached (opposite clipped residuals)


def test_without_noise_it_solves_the_huber_regression():
    rng = np.random.default_rng(2)
    X = _rows(rng, 4000)
    w_true = np.array([1.0, -1.5, 0.5, 0.0])
    y = X @ w_true + rng.normal(scale=0.05, size=4000)
    gd = _gd(batch_size=4000, max_iter=200)
    gd.learn(X, y)
    assert gd.n_steps == 80
    assert np.linalg.norm(gd.published[0] - w_true) < 0.05
    control = _gd(batch_size=4000, max_iter=2)  # two steps are far from the solution
    control.learn(X, y)
    assert np.linalg.norm(control.published[0] - w_true) > 0.5


def test_the_steps_grow_with_the_round_and_stop_at_max_iter():
    assert steps_per_round(1, 100) == 1
    assert steps_per_round(50, 100) == 1 and steps_per_round(51, 100) == 2
    assert steps_per_round(5000, 100) == 100 and steps_per_round(10**6, 100) == 100


def test_a_stream_of_disjoint_rounds_costs_one_round():
    m = calibrate_noise_multiplier(
        lambda m: round_event(NoiseSpec("gaussian", "discrete", m), 20), 1.0, 1e-5)
    rng = np.random.default_rng(3)
    gd = _gd(batch_size=1000, noise=NoiseSpec(multiplier=m))
    assert isinstance(gd.event(), NoOpDpEvent)
    X = _rows(rng, 7500)
    gd.learn(X, X[:, 0])
    assert gd.n_rounds == 7 and gd._pending_X.shape[0] == 500  # the rest waits, unreleased
    event = gd.event()
    assert isinstance(event, SelfComposedDpEvent) and event.count == 20
    assert epsilon_spent(event, 1e-5)[0] == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("noise, sampler", [("gaussian", "float"), ("laplace", "float"),
                                            ("gaussian", "discrete")])
def test_the_per_step_noise_has_the_calibrated_scale(noise, sampler):
    # one step from w = 0 on rows whose residuals are all clipped: the release
    # is -lr (C sum phi + Z) / b, so Z is visible and its scale can be checked
    b, C, m = 10, 0.5, 3.0
    X = np.tile(np.array([[0.6, 0.8, 0.0, 0.0]]), (b, 1))
    y = np.full(b, 10.0)
    draws = []
    rng = np.random.default_rng(4)
    for _ in range(400):
        gd = _gd(batch_size=b, residual_bound=C, noise=NoiseSpec(noise, sampler, m), rng=rng)
        gd.learn(X, y)
        exact = -gd.lr * (-C * X.sum(axis=0)) / b
        draws.append((gd.published[0] - exact) * b / (-gd.lr))
    Z = np.array(draws)
    scale = m * 2 * C
    if noise == "gaussian":
        assert np.std(Z) == pytest.approx(scale, rel=0.08)
    else:  # L2-Laplace in 4 dimensions: the norm is Gamma(4, scale)
        assert np.mean(np.linalg.norm(Z, axis=1)) == pytest.approx(4 * scale, rel=0.08)


def test_it_is_stable_at_the_smoothness_bound_for_any_rows():
    # all rows equal: the Hessian has its largest possible eigenvalue R^2
    X = np.tile(np.array([[1.0, 0.0, 0.0, 0.0]]), (5000, 1))
    gd = _gd(batch_size=5000, residual_bound=100.0, max_iter=1000)
    gd.learn(X, np.full(5000, 3.0))
    assert math.isclose(gd.published[0, 0], 3.0, rel_tol=1e-6)


@pytest.mark.parametrize("alpha", [0.6, 1.0, 3.0])
@pytest.mark.parametrize("estimator", ["logistic", "regressor"])
def test_the_step_bound_includes_the_penalty(alpha, estimator):
    # the step was 1 / smoothness of the loss alone: with alpha >= ~0.6 the
    # logistic fit diverged without any noise (coefficients ~1e142 at alpha=1,
    # NaN at 3). An L2-penalised minimiser has ||w|| <= Lipschitz / alpha in
    # unit space (augmented rows of norm <= sqrt(2), a Lipschitz constant
    # <= sqrt(2) for the logistic loss and sqrt(2) tau for the Huber loss)
    from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 4)) / 2
    if estimator == "logistic":
        y = (X @ [2.0, -1.0, 0.5, 0.0] + rng.logistic(size=2000) > 0).astype(int)
        est = PrivateOnlineLogistic(algorithm="noisy-gd", epsilon=np.inf, alpha=alpha,
                                    data_norm=2.0).fit(X, y, classes=[0, 1])
        w = np.append(est.coef_.ravel() * 2.0, est.intercept_)
        lipschitz = math.sqrt(2.0)
    else:
        y = X @ [2.0, -1.0, 0.5, 0.0] + 0.1 * rng.normal(size=2000)
        est = PrivateOnlineRegressor(algorithm="noisy-gd", epsilon=np.inf, alpha=alpha,
                                     data_norm=2.0, y_bound=4.0).fit(X, y)
        w = np.append(est.coef_ * 2.0, est.intercept_) / 4.0  # unit labels: y / y_bound
        lipschitz = math.sqrt(2.0) * est.residual_bound
    assert np.all(np.isfinite(w))
    assert np.linalg.norm(w) <= lipschitz / alpha * (1 + 1e-6)


def test_the_huber_schedule_bounds_the_noise_on_flat_directions():
    # T nu is the noise per coordinate the iterate collects along a direction
    # the loss does not curve: the Huber loss (the regressor's) keeps it at
    # HUBER_SCHEDULE_C = 0.4 (c = 2 gave R^2 < 0 on wine and diabetes), the
    # logistic loss keeps the classifier's SCHEDULE_C = 2; both stop at MAX_STEPS
    from skdpol.accounting import gaussian_mu_for_budget
    from skdpol.losses import HuberLoss, LogisticLoss
    from skdpol.online import gradient_schedule
    from skdpol.online._noisy_gd import (HUBER_SCHEDULE_C, MAX_STEPS, MOMENTUM,
                                         SCHEDULE_C)
    R = math.sqrt(2)
    for loss, c in ((HuberLoss(0.125), HUBER_SCHEDULE_C), (LogisticLoss(), SCHEDULE_C)):
        for n, eps in ((353, 1.0), (3918, 0.5), (3000, 1.0)):
            K, lr = gradient_schedule(n, eps, 1e-6, loss, R)
            nu = 2 * loss.lipschitz(R, math.inf) / (gaussian_mu_for_budget(eps, 1e-6) * n)
            assert K * lr / (1 - MOMENTUM) * nu == pytest.approx(c, rel=1e-9)
            assert lr <= 1 / loss.smoothness(R)
        K, lr = gradient_schedule(10**6, 1.0, 1e-6, loss, R)
        assert K == MAX_STEPS and lr == 1 / loss.smoothness(R)
    assert HUBER_SCHEDULE_C == 0.4 and SCHEDULE_C == 2.0


def test_the_classifier_takes_enough_steps_for_its_momentum_to_warm_up():
    # From rest, K steps of momentum mu integrate T (1 - mu (1 - mu^K) / (K (1 - mu))):
    # 10 steps at mu = 0.9 realised 0.41 of the schedule's T, and the breast
    # cancer fit at epsilon 0.5 sat at the majority class (tests/linear_model/
    # test_small_tables.py). The logistic and multinomial losses take at least
    # warmup_steps = 10 / (1 - mu) steps at the same T (the same noise T nu);
    # the Huber loss keeps MIN_STEPS (its constant was measured with it).
    from dp_accounting import ZCDpEvent
    from dp_accounting.rdp import RdpAccountant
    from skdpol.accounting import gaussian_mu_for_budget
    from skdpol.losses import HuberLoss, LogisticLoss, MultinomialLoss
    from skdpol.online import gradient_schedule
    from skdpol.online._noisy_gd import MIN_STEPS, MOMENTUM, SCHEDULE_C, warmup_steps
    R = math.sqrt(2)
    assert warmup_steps(0.9) == 100 and warmup_steps(0.5) == 20
    for loss in (LogisticLoss(), MultinomialLoss(3)):
        K, lr = gradient_schedule(455, 0.5, 1e-5, loss, R)
        nu = 2 * loss.lipschitz(R, math.inf) / (gaussian_mu_for_budget(0.5, 1e-5) * 455)
        assert K == 100 and K * lr / (1 - MOMENTUM) * nu == pytest.approx(SCHEDULE_C)
    assert gradient_schedule(455, 0.5, 1e-5, HuberLoss(1.0), R)[0] == MIN_STEPS
    # above ~20,000 rows at epsilon 0.5 the floor does not bind (Adult, credit)
    assert gradient_schedule(24_000, 0.5, 1e-5, LogisticLoss(), R)[0] == 121
    # the accounting follows K: the fit's 100 (discrete Gaussian, the default
    # sampler) steps, each (1 / (2 m^2))-zCDP at the multiplier m the
    # estimator calibrated, converted by dp-accounting's RDP accountant, spend
    # epsilon
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(455, 30))
    from skdpol import PrivateOnlineLogistic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # delta >= 1/n on 455 rows
        clf = PrivateOnlineLogistic(epsilon=0.5, delta=1e-5, data_norm=math.sqrt(30),
                                    random_state=0).fit(X, (X[:, 0] > 0).astype(int),
                                                        classes=[0, 1])
    gd = clf._stream.algorithm
    assert gd.n_steps == 100
    assert isinstance(gd.event(), SelfComposedDpEvent) and gd.event().count == 100
    accountant = RdpAccountant(orders=tuple(1.0 + np.logspace(-3, 5, 800)))
    accountant.compose(ZCDpEvent(rho=100 / (2 * gd.noise_multiplier**2)))
    assert accountant.get_epsilon(1e-5) == pytest.approx(0.5, rel=1e-6)
    assert clf.privacy_spent_.epsilon == pytest.approx(0.5, rel=1e-6)
