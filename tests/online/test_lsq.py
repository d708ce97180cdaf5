"""The classifier's least-squares stream ("ls", skdpol.online._lsq)."""

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent
from dp_accounting.pld import PLDAccountant

from skdpol.accounting import epsilon_spent
from skdpol.exceptions import BudgetExhaustedError
from skdpol.losses import LogisticLoss, MultinomialLoss
from skdpol.mechanisms import NoiseSpec, pack_symmetric
from skdpol.online import make_stream
from skdpol.online._ftl import joint_sensitivity
from skdpol.online._lsq import (
    INTERCEPT,
    LOGIT_SCALE,
    NOISE_RIDGE,
    PrivateLeastSquaresClassifier,
    noise_level_ridge,
)


def _stream(*, n_outputs=1, d=4, batch_size=100, horizon=None, eps=math.inf, delta=1e-5,
            sampler="float", mechanism="blt", alpha=1e-6, seed=0, intercept=True):
    loss = LogisticLoss() if n_outputs == 1 else MultinomialLoss(n_outputs)
    family = "gaussian" if delta > 0 and not math.isinf(eps) else (
        "laplace" if delta == 0 else "gaussian")
    return make_stream("ls", loss=loss, n_features=d + intercept, radius=1.0, alpha=alpha,
                       row_bound=math.sqrt(2.0), batch_size=batch_size, horizon=horizon,
                       epsilon=eps, delta=delta, noise=NoiseSpec(family, sampler),
                       calibration="tight", feedback="full", rng=np.random.default_rng(seed),
                       mechanism=mechanism, intercept=1.0 if intercept else None)


def _unit_rows(rng, n, d, intercept=True):
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    return np.hstack([X, np.ones((n, 1))]) if intercept else X


def _exact_leaf(ls, X, Y):
    """The leaf from rows whose constant column is INTERCEPT (the definition)."""
    A = X.copy()
    A[:, -1] *= INTERCEPT
    return np.concatenate([pack_symmetric(A.T @ A / ls.V_scale),
                           (A.T @ Y / ls.u_scale).ravel()])


# ------------------------------------------------------------------ sensitivity
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_a_replaced_row_moves_the_leaf_by_at_most_the_sensitivity(n_outputs):
    rng = np.random.default_rng(0)
    ls = _stream(n_outputs=n_outputs, d=3)
    worst = 0.0
    for _ in range(3000):
        X = _unit_rows(rng, 5, 3)
        # rows on the unit sphere stress the bound; labels of every coding
        X[:, :3] /= np.linalg.norm(X[:, :3], axis=1, keepdims=True)
        y = (rng.choice([-1.0, 1.0], 5) if n_outputs == 1
             else rng.integers(0, n_outputs, 5).astype(float))
        X2, y2 = X.copy(), y.copy()
        X2[0] = _unit_rows(rng, 1, 3)[0]
        X2[0, :3] /= np.linalg.norm(X2[0, :3])
        y2[0] = rng.choice([-1.0, 1.0]) if n_outputs == 1 else rng.integers(0, n_outputs)
        diff = np.linalg.norm(ls.leaf(X, y) - ls.leaf(X2, y2))
        worst = max(worst, diff)
    assert worst <= ls.sensitivity
    assert worst > 0.9 * ls.sensitivity  # the bound is nearly reached


def test_the_worst_pair_reaches_the_joint_sensitivity():
    # ||v|| = ||w|| = R, v.w = R^2 / 2, opposite labels: PQFTL's worst case
    ls = _stream(d=2)
    R = ls.row_bound
    assert R == pytest.approx(math.hypot(1.0, INTERCEPT))
    # unit rows [x, 1] whose scaled rows [x, c] have v.w = R^2 / 2
    c2 = INTERCEPT**2
    cos = (R**2 / 2 - c2) / 1.0  # x.x' for unit x, x'
    x, x2 = np.array([1.0, 0.0]), np.array([cos, math.sqrt(1 - cos**2)])
    X = np.array([[*x, 1.0]])
    X2 = np.array([[*x2, 1.0]])
    diff = np.linalg.norm(ls.leaf(X, np.array([1.0])) - ls.leaf(X2, np.array([-1.0])))
    exact = joint_sensitivity(R, 1.0, ls.V_scale, ls.u_scale)
    assert diff == pytest.approx(exact, rel=1e-12)
    assert exact == pytest.approx(math.sqrt(9 / 8))
    assert exact <= ls.sensitivity <= exact * (1 + 1e-9)  # the float sums' bound: tiny


@pytest.mark.parametrize("n_outputs", [1, 3])
def test_the_leaf_is_the_sums_of_rows_with_the_constant_column_scaled(n_outputs):
    rng = np.random.default_rng(1)
    ls = _stream(n_outputs=n_outputs)
    X = _unit_rows(rng, 50, 4)
    y = (rng.choice([-1.0, 1.0], 50) if n_outputs == 1
         else rng.integers(0, n_outputs, 50).astype(float))
    Y = y[:, None] if n_outputs == 1 else np.eye(n_outputs)[y.astype(int)]
    np.testing.assert_allclose(ls.leaf(X, y), _exact_leaf(ls, X, Y), rtol=1e-12, atol=1e-14)
    before = X.copy()
    ls.leaf(X, y)
    assert np.array_equal(X, before)  # the caller's rows are not touched


# ------------------------------------------------------------------ calibration
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_calibration_matches_dp_accounting(eps):
    # the BLT stream of every release is one Gaussian mechanism of multiplier m
    ls = _stream(eps=eps, horizon=20)
    m = ls._tree.noise_multiplier
    accountant = PLDAccountant()
    accountant.compose(GaussianDpEvent(m))
    assert accountant.get_epsilon(1e-5) == pytest.approx(eps, rel=1e-3)
    spent, how = epsilon_spent(ls.event(20), 1e-5)
    assert spent == pytest.approx(eps, rel=1e-6)
    # the noise on a leaf coordinate is m times the leaf sensitivity at one release
    one = _stream(eps=eps, horizon=1)
    assert one._tree.noise_std_at(1)[0] == pytest.approx(
        one._tree.noise_multiplier * one.sensitivity, rel=1e-9)


def test_pure_dp_uses_the_laplace_tree():
    ls = _stream(eps=1.0, delta=0.0, mechanism="tree", horizon=8)
    spent, _ = epsilon_spent(ls.event(8), 0.0)
    assert spent == pytest.approx(1.0, rel=1e-6)


# ------------------------------------------------------------------ the solve
@pytest.mark.parametrize("n_outputs", [1, 3])
def test_noise_free_limit_is_ridge_least_squares_on_the_coded_labels(n_outputs):
    rng = np.random.default_rng(2)
    n, d, alpha = 3000, 4, 1e-3
    X = _unit_rows(rng, n, d)
    y = (rng.choice([-1.0, 1.0], n) if n_outputs == 1
         else rng.integers(0, n_outputs, n).astype(float))
    Y = y[:, None] if n_outputs == 1 else np.eye(n_outputs)[y.astype(int)]
    ls = _stream(n_outputs=n_outputs, batch_size=500, alpha=alpha)
    ls.learn(X, y)
    A = X.copy()
    A[:, -1] *= INTERCEPT
    W = np.linalg.solve(A.T @ A + n * alpha * np.eye(d + 1), A.T @ Y).T
    W[:, -1] *= INTERCEPT
    scale = LOGIT_SCALE if n_outputs == 1 else LOGIT_SCALE * n_outputs / 2
    np.testing.assert_allclose(ls.published, scale * W, rtol=1e-8, atol=1e-10)


def test_the_ridge_is_set_by_the_public_noise_level():
    rng = np.random.default_rng(3)
    B = rng.normal(size=(5, 5))
    V = B @ B.T - 2.0 * np.eye(5)  # a noisy Gram may be indefinite
    U = rng.normal(size=(5, 2))
    lam, Q = np.linalg.eigh(V)
    ridge = NOISE_RIDGE * math.sqrt(10.0) * 0.7 + 100 * 1e-3
    expected = Q @ np.diag(1.0 / (np.maximum(lam, 0) + ridge)) @ Q.T @ U
    np.testing.assert_allclose(noise_level_ridge(V, U, 100, 0.7, 1e-3), expected, rtol=1e-10)
    # positive definite: the Cholesky shortcut gives the same solution
    P = B @ B.T + 0.1 * np.eye(5)
    lam, Q = np.linalg.eigh(P)
    expected = Q @ np.diag(1.0 / (lam + ridge)) @ Q.T @ U
    np.testing.assert_allclose(noise_level_ridge(P, U, 100, 0.7, 1e-3), expected, rtol=1e-9)


def test_binary_and_two_class_one_hot_give_the_same_scores():
    # s_1 - s_0 of the {0, 1}^2 coding is the +-1 model's score (no noise)
    rng = np.random.default_rng(4)
    X = _unit_rows(rng, 800, 3)
    y01 = rng.integers(0, 2, 800).astype(float)
    binary = _stream(d=3)
    binary.learn(X, 2 * y01 - 1)
    two = PrivateLeastSquaresClassifier(
        n_features=4, n_outputs=2, alpha=1e-6, batch_size=100, horizon=None,
        noise=NoiseSpec("gaussian", "float").with_multiplier(0.0),
        rng=np.random.default_rng(0), mechanism="blt")
    two.learn(X, y01)
    np.testing.assert_allclose(two.published[1] - two.published[0], binary.published[0],
                               rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------ rounds
def test_rounds_of_many_rows_wait_and_account_per_round():
    rng = np.random.default_rng(5)
    X, y = _unit_rows(rng, 5000, 4), rng.choice([-1.0, 1.0], 5000)
    big = _stream(batch_size=2000, horizon=2, eps=1.0)
    big.learn(X[:1500], y[:1500])
    assert big.n_rounds == 0 and big.n_rows_used == 0
    assert np.array_equal(big.published, np.zeros((1, 5)))  # nothing published yet
    big.learn(X[1500:4000], y[1500:4000])
    assert big.n_rounds == 2 and big.n_rows_used == 4000
    with pytest.raises(BudgetExhaustedError):
        big.check_room(2000)  # a third round would pass the horizon
    big.check_room(1999)  # rows that only wait are fine
    # the cost is a function of the rounds: the planned budget at the horizon
    assert epsilon_spent(big.event(1), 1e-5)[0] <= epsilon_spent(big.event(2), 1e-5)[0]
    assert epsilon_spent(big.event(), 1e-5)[0] == pytest.approx(1.0, rel=1e-6)
    # without noise, rounds of 2,000 rows learn what rounds of 100 learn
    a, b = _stream(batch_size=2000), _stream(batch_size=100)
    a.learn(X[:4000], y[:4000])
    b.learn(X[:4000], y[:4000])
    np.testing.assert_allclose(a.published, b.published, rtol=1e-9)


def test_trace_publishes_the_model_before_each_round():
    rng = np.random.default_rng(6)
    X, y = _unit_rows(rng, 6, 2), rng.choice([-1.0, 1.0], 6)
    ls = _stream(d=2, batch_size=1)
    models = ls.learn(X, y, trace=True)
    assert models.shape == (6, 1, 3)
    assert np.array_equal(models[0], np.zeros((1, 3)))
    again = _stream(d=2, batch_size=1)
    again.learn(X[:3], y[:3])
    np.testing.assert_allclose(models[3], again.published)


def test_a_checkpoint_copy_undoes_later_rounds():
    import copy
    rng = np.random.default_rng(7)
    X, y = _unit_rows(rng, 400, 3), rng.choice([-1.0, 1.0], 400)
    ls = _stream(d=3, eps=1.0, horizon=4)
    ls.learn(X[:100], y[:100])
    saved = copy.copy(ls)
    ls.learn(X[100:300], y[100:300])
    assert saved.n_rounds == 1 and saved._tree.n_leaves == 1
