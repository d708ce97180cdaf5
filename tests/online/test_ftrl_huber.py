"""The regressor's algorithm="ftrl" (skdpol.online._ftal, ``initial > 0``).

Huber's loss with the residual clipped at tau, an initial regulariser
sigma_0 = b R^2 / 2 and the averaged iterates: the derived sensitivity, the
calibration pinned against dp-accounting, the first release's noise, the
update the notes derive, and the classifier's "ftrl" left as it was.
"""

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent
from dp_accounting.pld import PLDAccountant

from skdpol.accounting import epsilon_spent
from skdpol.losses import LogisticLoss
from skdpol.losses._linear import HuberLoss
from skdpol.mechanisms import NoiseSpec
from skdpol.online import make_stream
from skdpol.online._ftal import INITIAL_CURVATURE, TAIL

from _calibration import assert_zcdp_pinned  # tests/online/_calibration.py

TAU = 0.125
R = math.sqrt(2.0)  # unit rows [u, 1], ||u|| <= 1


def _unit_rows(rng, n, d):
    U = rng.normal(size=(n, d)) / math.sqrt(d) * rng.uniform(0.2, 2.0, size=(n, 1))
    U /= np.maximum(1.0, np.linalg.norm(U, axis=1, keepdims=True))
    return np.hstack([U, np.ones((n, 1))])


def _stream(loss=None, *, n_features=5, batch_size=10, horizon=20, epsilon=1.0, delta=1e-6,
            sampler="float", mechanism="blt", seed=0, alpha=1e-3):
    loss = HuberLoss(TAU) if loss is None else loss
    return make_stream(
        "ftrl", loss=loss, n_features=n_features, radius=loss.optimum_radius(alpha),
        alpha=alpha, row_bound=R, batch_size=batch_size, horizon=horizon, epsilon=epsilon,
        delta=delta, noise=NoiseSpec("gaussian" if delta > 0 else "laplace", sampler),
        calibration="tight", feedback="full", rng=np.random.default_rng(seed),
        mechanism=mechanism)


# ----------------------------------------------------------------- sensitivity
def test_a_replaced_row_moves_a_leaf_by_at_most_2L():
    # a leaf is the round's Huber gradient sum at the (public) iterate, any
    # model, any label: one replaced row moves it by <= 2 tau R
    rng = np.random.default_rng(1)
    loss, d, b = HuberLoss(TAU), 4, 12
    worst = 0.0
    for _ in range(1500):
        X, y = _unit_rows(rng, b, d), rng.uniform(-1, 1, b)
        W = rng.normal(scale=5.0, size=(1, d + 1))  # no ball: any model
        X2, y2 = X.copy(), y.copy()
        X2[5], y2[5] = _unit_rows(rng, 1, d)[0], rng.uniform(-1, 1)
        diff = loss.gradient(W, X, y) - loss.gradient(W, X2, y2)
        worst = max(worst, np.linalg.norm(diff) / (2 * TAU * R))
    assert worst <= 1.0 + 1e-12
    assert worst > 0.6  # approached (opposite clipped residuals)


def test_the_stream_states_the_derived_terms():
    algo = _stream(batch_size=20)
    assert math.isinf(algo.radius)  # Huber: bounded gradients, no ball
    assert algo.lipschitz == pytest.approx(TAU * R)
    assert algo._tree.sensitivity == pytest.approx(2 * TAU * R)
    # sigma_0 = b R^2 / 2: a step on the round's mean of at most 2 / R^2
    assert INITIAL_CURVATURE == 0.5
    assert algo.initial == pytest.approx(0.5 * 20 * R**2)
    assert 20 / algo.initial == pytest.approx(2 / R**2)


def test_the_classifier_ftrl_is_the_seeds_update():
    # the logistic "ftrl" keeps initial = 0 and publishes its iterate
    algo = _stream(LogisticLoss(), alpha=0.01)
    assert algo.initial == 0.0
    rng = np.random.default_rng(3)
    algo.learn(_unit_rows(rng, 40, 4), rng.choice([-1.0, 1.0], 40))
    assert algo.published is algo.W


# ----------------------------------------------------------------- calibration
def test_the_blt_stream_is_one_gaussian_mechanism_pinned_against_dp_accounting():
    algo = _stream(horizon=40)
    rng = np.random.default_rng(2)
    algo.learn(_unit_rows(rng, 400, 4), rng.uniform(-1, 1, 400))
    event = algo.event()
    assert isinstance(event, GaussianDpEvent)
    accountant = PLDAccountant()
    accountant.compose(GaussianDpEvent(event.noise_multiplier))
    assert accountant.get_epsilon(1e-6) == pytest.approx(1.0, rel=1e-3)
    assert epsilon_spent(event, 1e-6)[0] == pytest.approx(1.0, rel=1e-6)
    assert epsilon_spent(algo.event(1), 1e-6)[0] <= epsilon_spent(event, 1e-6)[0]


def test_the_discrete_stream_is_zcdp_pinned_against_dp_accounting():
    event = _stream(sampler="discrete", horizon=40).event(40)
    # dp-accounting's RDP accountant on the same rho gives the same budget
    assert_zcdp_pinned(event, 1.0, 1e-6)


def test_pure_dp_uses_the_tree_with_laplace_nodes():
    algo = _stream(epsilon=2.0, delta=0.0, mechanism="tree", horizon=16)
    assert epsilon_spent(algo.event(16), 0.0)[0] <= 2.0 + 1e-9


def test_the_first_release_carries_the_calibrated_noise():
    # zero rows: the leaf is 0, so W_1 = -G_1 / (sigma_0 + alpha b) (and the
    # average after one round is W_1) shows the first prefix sum's noise
    draws = []
    for seed in range(600):
        algo = _stream(batch_size=4, horizon=8, seed=seed)
        algo.learn(np.zeros((4, 5)), np.zeros(4))
        draws.append(-algo.published[0] * (algo.initial + algo.alpha * 4))
    expected = float(algo._tree.noise_std_at(1)[0])
    assert expected > 0
    assert np.std(np.array(draws)) == pytest.approx(expected, rel=0.06)


# ----------------------------------------------------------------- the update
def test_without_noise_each_round_is_a_capped_gradient_step_and_the_average_is_published():
    # the notes: W_{t+1} = W_t - g_t / (sigma_0 + alpha n_t), g_t the round's
    # gradient sum at W_t, and avg_t = (1 - rho_t) avg_{t-1} + rho_t W_t
    rng = np.random.default_rng(4)
    X, y = _unit_rows(rng, 200, 4), rng.uniform(-1, 1, 200)
    algo = _stream(epsilon=math.inf, batch_size=10, horizon=20)
    loss, W, avg = HuberLoss(TAU), np.zeros((1, 5)), np.zeros((1, 5))
    for t in range(20):
        rows = slice(10 * t, 10 * t + 10)
        g = loss.gradient(W, X[rows], y[rows])
        W = W - g / (algo.initial + algo.alpha * 10 * (t + 1))
        rho = min(1.0, 1.0 / (TAIL * (t + 1)))
        avg = (1 - rho) * avg + rho * W
        algo.learn(X[rows], y[rows])
        np.testing.assert_allclose(algo.W, W, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(algo.published, avg, rtol=1e-9, atol=1e-12)


def test_without_noise_it_fits_a_huber_regression():
    rng = np.random.default_rng(5)
    X = _unit_rows(rng, 20_000, 4)
    w = np.array([[0.4, -0.3, 0.2, 0.1, 0.05]])
    y = np.clip(X @ w[0] + 0.02 * rng.normal(size=20_000), -1, 1)
    algo = _stream(epsilon=math.inf, batch_size=20, horizon=1_000)
    algo.learn(X, y)
    assert np.linalg.norm(algo.published - w) < 0.1 * np.linalg.norm(w)
