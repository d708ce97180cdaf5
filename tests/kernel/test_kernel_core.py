"""Seed 003's numeric core: random features, the KORLS update, its bounds and rate."""

import math

import numpy as np
import pytest

from skdpol.exceptions import BudgetExhaustedError
from skdpol.kernel import (
    KernelORLS,
    RandomFourierFeatures,
    default_t0,
    seed_norm_bound,
    seed_sensitivity,
    step_sizes,
)
from skdpol.mechanisms import NoiseSpec
from skdpol.online import OutputPerturbation

THETAS = (0.6, 0.75, 0.9)


# ------------------------------------------------------------------ features
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("intercept", [False, True])
def test_feature_norm_is_one_for_every_input(kernel, intercept):
    rng = np.random.default_rng(0)
    rff = RandomFourierFeatures(3, 64, kernel=kernel, gamma=0.7, intercept=intercept, rng=rng)
    extreme = np.array([[0.0, 0.0, 0.0], [1e12, -1e12, 3.0], [1e-300, -1e-300, 0.0],
                        [1e150, 1e-5, -7.0], [-2.5, np.pi, 1e8]])
    for X in (rng.normal(size=(500, 3)) * 10.0, extreme):
        Z = rff.transform(X)
        assert Z.dtype == np.float64 and Z.shape == (X.shape[0], rff.n_features_out)
        assert np.abs(np.linalg.norm(Z, axis=1) - 1.0).max() <= 1e-14
    assert rff.kappa == 1.0
    if intercept:
        np.testing.assert_array_equal(Z[:, -1], math.sqrt(0.5))


def _kernel_error(rff, X):
    """|phi(x).phi(x') - K(x, x')| and the Monte-Carlo std of the estimate."""
    Z = rff.transform(X)
    K = rff.kernel_matrix(X, X)
    # Var cos(omega.delta) = (1 + K(2 delta)) / 2 - K(delta)^2, averaged over m frequencies
    var = (1.0 + rff.kernel_matrix(2 * X, 2 * X)) / 2.0 - K * K
    return np.abs(Z @ Z.T - K), np.sqrt(np.maximum(var, 0.0) / rff.frequencies.shape[0])


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_features_approximate_the_kernel(kernel):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3)) * 0.7
    rff = RandomFourierFeatures(3, 2 * 4096, kernel=kernel, gamma=0.5, rng=rng)
    err, std = _kernel_error(rff, X)
    assert (err <= 5.0 * std + 1e-12).all()  # 5 sigma on 190 pairs
    assert err.max() < 0.05
    # power: the same features compared with the kernel of doubled gamma fail
    wrong = RandomFourierFeatures(3, 2, kernel=kernel, gamma=1.0, rng=0)
    assert (np.abs(rff.transform(X) @ rff.transform(X).T - wrong.kernel_matrix(X, X))
            > 5.0 * std + 1e-12).any()


def test_intercept_features_approximate_the_shifted_kernel():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(15, 2))
    rff = RandomFourierFeatures(2, 2 * 4096, gamma=0.3, intercept=True, rng=rng)
    Z = rff.transform(X)
    plain = RandomFourierFeatures(2, 2, gamma=0.3).kernel_matrix(X, X)
    np.testing.assert_allclose(rff.kernel_matrix(X, X), (plain + 1.0) / 2.0)
    assert np.abs(Z @ Z.T - (plain + 1.0) / 2.0).max() < 0.03


def test_features_do_not_depend_on_the_data():
    rng = np.random.default_rng(3)
    a = RandomFourierFeatures(4, 32, kernel="laplacian", gamma=2.0, rng=7)
    before = a.frequencies.copy()
    X = rng.normal(size=(50, 4)) * 100.0
    Z = a.transform(X)
    b = RandomFourierFeatures(4, 32, kernel="laplacian", gamma=2.0, rng=7)
    np.testing.assert_array_equal(a.frequencies, before)
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    # a row's features do not depend on the other rows of the chunk
    np.testing.assert_allclose(Z[17], b.transform(X[17:18])[0], rtol=0, atol=1e-12)
    perm = rng.permutation(50)
    np.testing.assert_allclose(b.transform(X[perm]), Z[perm], rtol=0, atol=1e-12)


def test_feature_parameters_are_checked():
    with pytest.raises(ValueError, match="n_components"):
        RandomFourierFeatures(3, 7)
    with pytest.raises(ValueError, match="gamma"):
        RandomFourierFeatures(3, 8, gamma=0.0)
    with pytest.raises(ValueError, match="kernel"):
        RandomFourierFeatures(3, 8, kernel="poly")
    rff = RandomFourierFeatures(3, 8, rng=0)
    with pytest.raises(ValueError, match="shape"):
        rff.transform(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="non-finite"):
        rff.transform(np.array([[np.inf, 0.0, 0.0]]))


# ----------------------------------------------------------------- schedule
@pytest.mark.parametrize("kappa", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("theta", [0.51, *THETAS, 0.99])
def test_default_t0_is_the_smallest_contracting_offset(theta, kappa):
    t0 = default_t0(theta, kappa)
    assert t0 ** theta >= kappa**2 + 1 > math.nextafter(t0, 0.0) ** theta
    eta, lam = step_sizes(np.arange(1, 10**5), theta, t0)
    assert (eta * (kappa**2 + lam) <= 1.0).all()  # A_t is PSD, ||A_t|| <= 1 - eta lambda
    np.testing.assert_allclose(eta * lam, 1.0 / (np.arange(1, 10**5) + t0), rtol=1e-13)


@pytest.mark.parametrize("theta", THETAS)
def test_public_bounds_are_below_the_seeds(theta):
    # zero rows leave W at 0 but advance the public schedule
    algo = KernelORLS(n_components=2, theta=theta, y_bound=2.0, batch_size=997)
    for _ in algo.run(np.zeros((30 * 997, 2)), np.zeros(30 * 997)):
        n = algo.n_rows_used
        assert algo.norm_bound() <= seed_norm_bound(n, theta, algo.t0, 1.0, 2.0)
        assert algo.sensitivity() <= seed_sensitivity(n + 1, theta, algo.t0, 1.0, 2.0)
    # closed forms, summed exactly: B after n rows and Delta = c_n (the last row's)
    t0 = algo.t0

    def B(rows):
        return 2.0 * math.fsum((i + t0) ** (1 - theta) for i in range(1, rows + 1)) / (rows + t0)

    c_n = (n + t0) ** -theta * (B(n - 1) + 2.0 * 2.0)
    for value, exact in [(algo.norm_bound(), B(n)), (algo.sensitivity(), c_n)]:
        assert exact <= value <= exact * (1 + 2e-9)
    # the ratio to the seed's Lemma 2 tends to 1 / (2 - theta)
    ratio = algo.norm_bound() / seed_norm_bound(n, theta, algo.t0, 1.0, 2.0)
    assert abs(ratio * (2.0 - theta) - 1.0) < 0.02


def test_bounds_follow_the_recursions():
    theta, t0, kappa, M = 0.7, 5.0, 1.3, 0.8
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 5))
    X *= kappa / np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.uniform(-M, M, 200)
    algo = KernelORLS(n_components=5, theta=theta, t0=t0, kappa=kappa, y_bound=M, batch_size=4)
    w, B, delta, expected = np.zeros(5), 0.0, 0.0, []
    for t in range(1, 201):  # the docstring's recursions, row by row
        eta, lam = (t + t0) ** -theta, (t + t0) ** -(1 - theta)
        w = w - eta * ((w @ X[t - 1] - y[t - 1]) * X[t - 1] + lam * w)
        delta = max(eta * kappa * (kappa * B + 2 * M), (1 - eta * lam) * delta)
        B = (1 - eta * lam) * B + eta * kappa * M
        expected.append((w.copy(), B, delta))
    for r, _ in enumerate(algo.run(X, y)):
        w, B, delta = expected[4 * r + 3]
        np.testing.assert_allclose(algo.W[0], w, rtol=0, atol=1e-14)
        np.testing.assert_allclose(algo.norm_bound(), B, rtol=2e-9)
        np.testing.assert_allclose(algo.sensitivity(), delta, rtol=2e-9)
        assert algo.sensitivity() >= delta and algo.radius == algo.norm_bound()


# ------------------------------------------------------------- sensitivity
def _correlated_stream(rng, n, D):
    """Rows clustered around e_1 with label +1: drives ||w|| towards its largest values."""
    X = 0.3 * rng.normal(size=(n, D))
    X[:, 0] += 1.0
    return X / np.linalg.norm(X, axis=1, keepdims=True), np.ones(n)


def _rff_stream(rng, n, D):
    rff = RandomFourierFeatures(2, D, gamma=0.5, rng=rng)
    X = rng.normal(size=(n, 2))
    return rff.transform(X), np.clip(np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=n), -1, 1)


@pytest.mark.parametrize("theta", THETAS)
def test_sensitivity_bounds_every_release_and_is_not_vacuous(theta):
    rng = np.random.default_rng(5)
    n, D, worst = 600, 16, {}
    for batch_size in (1, 7, 32):
        for trial in range(6):
            X, y = (_rff_stream if trial % 2 else _correlated_stream)(rng, n, D)
            i = rng.integers(n)
            X2, y2 = X.copy(), y.copy()
            # adversarial neighbour: an orthogonal row with the opposite extreme label
            z = rng.normal(size=D)
            z -= (z @ X[i]) * X[i]
            X2[i], y2[i] = z / np.linalg.norm(z), (-1.0 if y[i] > 0 else 1.0)
            a, b = (KernelORLS(n_components=D, theta=theta, y_bound=1.0,
                               batch_size=batch_size) for _ in range(2))
            for _ in zip(a.run(X, y), b.run(X2, y2)):
                gap = np.linalg.norm(a.W - b.W)
                assert gap <= a.sensitivity() == b.sensitivity()
                assert max(np.linalg.norm(a.W), np.linalg.norm(b.W)) <= a.norm_bound()
                worst[batch_size] = max(worst.get(batch_size, 0.0), gap / a.sensitivity())
    # Observed maxima 0.13-0.30 (theta 0.6), 0.23-0.36 (0.75), 0.34-0.41 (0.9),
    # highest for batch_size=1 (no contraction between the replaced row and the
    # release). The slack is B_t, the worst-case norm (~ t^(1 - theta) / (2 - theta)),
    # against the actual ||w|| ~ M / kappa of a least-squares fit.
    assert min(worst.values()) > 0.1


def test_sensitivity_is_attained_up_to_the_norm_slack_on_the_first_row():
    # after one row B_1 = 0, so Delta = 2 eta_1 kappa M, attained by y = +-M on the same phi
    algo = [KernelORLS(n_components=3, theta=0.8, y_bound=1.5) for _ in range(2)]
    phi = np.array([[0.6, 0.8, 0.0]])
    algo[0].learn(phi, np.array([1.5]))
    algo[1].learn(phi, np.array([-1.5]))
    np.testing.assert_allclose(np.linalg.norm(algo[0].W - algo[1].W),
                               algo[0].sensitivity(), rtol=1e-8)


# --------------------------------------------------------------- error rate
def _population_covariance(rff):
    """E[phi phi^T] for x uniform on [-1, 1]^d, in closed form.

    E cos(a.x) = prod_k sin(a_k) / a_k and E sin(a.x) = 0, so the cos/sin
    blocks are (S(w_j - w_k) +- S(w_j + w_k)) / (2 m) and the cross block is 0.
    """
    W = rff.frequencies

    def S(A):
        return np.prod(np.sinc(A / np.pi), axis=-1)

    dif, add = S(W[:, None] - W[None]), S(W[:, None] + W[None])
    zero = np.zeros_like(dif)
    return np.block([[dif + add, zero], [zero, dif - add]]) / (2 * W.shape[0])


def _error_curve(theta, rff, w_star, seed, learn=True, n=2**14):
    """||w_t - w_star|| at t = 2^8 .. 2^14."""
    rng = np.random.default_rng(seed)
    Phi = rff.transform(rng.uniform(-1, 1, size=(n, 2)))
    noise = rng.uniform(-0.1, 0.1, n)  # bounded: |y| <= 0.6 < y_bound, never clipped
    y = Phi @ w_star + noise if learn else noise
    algo = KernelORLS(n_components=Phi.shape[1], theta=theta, y_bound=1.0, batch_size=8)
    errors, done = [], 0
    for k in range(8, 15):
        algo.learn(Phi[done:2**k], y[done:2**k])
        done = 2**k
        errors.append(np.linalg.norm(algo.W[0] - w_star))
    return np.array(errors)


def _mean_path_error(theta, t0, Sigma, w_star, n=2**14):
    """||E w_t - w_star||: E w_{t+1} = E w_t - eta_t (Sigma (E w_t - w_star) + lambda_t E w_t).

    Exact, because phi_t is independent of w_t and E[y phi] = Sigma w_star.
    """
    m, out = np.zeros_like(w_star), []
    for t in range(1, n + 1):
        eta, lam = (t + t0) ** -theta, (t + t0) ** -(1 - theta)
        m -= eta * (Sigma @ (m - w_star) + lam * m)
        if t >= 256 and t & (t - 1) == 0:
            out.append(np.linalg.norm(m - w_star))
    return np.array(out)


def _slope(errors):
    return np.polyfit(np.log(2.0 ** np.arange(8, 15)), np.log(errors), 1)[0]


def test_error_rate_follows_the_mean_recursion():
    """Seed 003 Theorem 2 claims ||f_t - f_rho||_K = O(t^-(theta - 1/2)).

    The target lies in the feature span: y = <w*, phi(x)> + bounded noise,
    w* along the top eigenvector of Sigma = E[phi phi^T] (mu_1 = 0.55), so
    w_rho = w* exactly. The measured error follows the exact mean recursion
    (slopes -0.38, -0.20, -0.05 for theta = 0.6, 0.75, 0.9, within 0.01 of the
    recursion's; the fluctuations add < 10%):
    it is the regularisation bias lambda_t / (mu + lambda_t) ||w*|| that sets
    the rate, not the seed's t^-(theta - 1/2). With kappa = 1 every eigenvalue
    is <= 1 while lambda_t = t^-(1 - theta) is still 0.38 at t = 2^14 for
    theta = 0.9, so the bias stays above 0.27 ||w*||: the seed's Theorem 2
    drops the term eta_t lambda_t f_rho, which is not a martingale difference.
    """
    rng = np.random.default_rng(6)
    rff = RandomFourierFeatures(2, 32, gamma=0.5, rng=rng)
    Sigma = _population_covariance(rff)
    empirical = rff.transform(rng.uniform(-1, 1, size=(50_000, 2)))
    assert np.abs(empirical.T @ empirical / 50_000 - Sigma).max() < 2e-3
    mu, V = np.linalg.eigh(Sigma)
    w_star = 0.5 * V[:, -1]
    slopes = {}
    for theta in THETAS:
        errors = np.mean([_error_curve(theta, rff, w_star, s) for s in range(4)], axis=0)
        predicted = _mean_path_error(theta, default_t0(theta), Sigma, w_star)
        slopes[theta] = _slope(errors)
        assert slopes[theta] < -0.03  # it learns
        assert abs(slopes[theta] - _slope(predicted)) < 0.03
        assert np.all((errors / predicted > 0.9) & (errors / predicted < 1.25))
    assert slopes[0.6] < slopes[0.75] < slopes[0.9]
    # the seed's rate is met for theta = 0.6 (bound -0.1) but far from it at 0.9 (-0.4)
    assert slopes[0.6] < -0.1 and slopes[0.9] > -0.4 + 0.25
    # control: labels that carry no signal give a flat curve, and fail the checks above
    flat = np.mean([_error_curve(0.75, rff, w_star, s, learn=False) for s in range(4)], axis=0)
    assert abs(_slope(flat)) < 0.02
    assert abs(_slope(flat) - _slope(_mean_path_error(0.75, default_t0(0.75), Sigma, w_star))) > 0.1


# ------------------------------------------------------- parameters, inputs
@pytest.mark.parametrize("theta", [0.5, 1.0, 0.3, 1.2, True])
def test_theta_outside_the_open_interval_is_refused(theta):
    with pytest.raises(ValueError, match="theta"):
        KernelORLS(n_components=4, theta=theta, y_bound=1.0)


def test_t0_violating_the_contraction_condition_is_refused():
    with pytest.raises(ValueError, match="t0"):
        KernelORLS(n_components=4, theta=0.75, y_bound=1.0, t0=2.5)  # 2.5**0.75 < 2
    with pytest.raises(ValueError, match="t0"):
        KernelORLS(n_components=4, theta=0.75, y_bound=1.0, kappa=2.0, t0=5.0)
    KernelORLS(n_components=4, theta=0.75, y_bound=1.0, t0=2.52)
    for name, value in [("y_bound", 0.0), ("kappa", -1.0), ("t0", math.inf),
                        ("n_components", 0), ("batch_size", 0), ("horizon", 0)]:
        kwargs = dict(n_components=4, theta=0.75, y_bound=1.0)
        kwargs[name] = value
        with pytest.raises(ValueError, match=name):
            KernelORLS(**kwargs)


def test_rows_outside_the_bounds_are_refused_before_any_update():
    algo = KernelORLS(n_components=3, theta=0.75, y_bound=1.0, batch_size=2, horizon=3)
    good = np.tile([[0.6, 0.8, 0.0]], (4, 1))
    algo.learn(good[:2], np.array([0.5, -0.5]))
    state = algo.W.copy()
    for X, y in [(np.vstack([good, [[1.0, 0.1, 0.0]]]), np.zeros(5)),
                 (good, np.array([0.0, 0.0, 1.01, 0.0])),
                 (np.vstack([good[:1], [[np.nan, 0.0, 0.0]]]), np.zeros(2)),
                 (good[:, :2], np.zeros(4))]:
        with pytest.raises(ValueError, match="kappa|y_bound|shape"):
            algo.learn(X, y)
        np.testing.assert_array_equal(algo.W, state)
        assert algo.n_rounds == 1
    with pytest.raises(BudgetExhaustedError):  # 3 more rounds, past horizon=3
        algo.learn(np.vstack([good, good[:2]]), np.zeros(6))
    assert algo.n_rounds == 1


def test_output_perturbation_accepts_korls():
    rng = np.random.default_rng(8)
    rff = RandomFourierFeatures(2, 20, rng=rng)
    X = rff.transform(rng.normal(size=(300, 2)))
    base = KernelORLS(n_components=20, theta=0.75, y_bound=1.0, batch_size=10, horizon=30)
    pocp = OutputPerturbation(base, epsilon=1.0, delta=1e-5, noise=NoiseSpec(), rng=rng)
    models = pocp.learn(X, np.clip(X[:, 0] * 3, -1, 1), trace=True)
    assert models.shape == (30, 1, 20) and pocp.releases == 30
    assert np.linalg.norm(pocp.published) <= base.radius * (1 + 1e-12)  # projected
    assert not np.allclose(pocp.published, base.W)
