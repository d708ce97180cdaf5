"""DP-FTRL with heavy-ball momentum (skdpol.online._momentum, algorithm="ftrl-momentum")."""

import copy
import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent
from dp_accounting.pld import PLDAccountant

from skdpol.accounting import epsilon_spent
from skdpol.exceptions import BudgetExhaustedError
from skdpol.losses import LogisticLoss, MultinomialLoss
from skdpol.losses._linear import HuberLoss
from skdpol.mechanisms import NoiseSpec
from skdpol.online import make_stream
from skdpol.online._momentum import (
    COLUMN_ONLY_WIDTH,
    CONSTANT,
    HUBER_TAIL,
    TAIL,
    MomentumFTRL,
    _column_scaled,
    _gradient_sum,
    _margins,
    momentum_round,
    momentum_step_rows,
)
from skdpol.online._step_noise import (
    NOISE_MIN_ROUNDS,
    noise_step_scale,
    open_rule_rounds,
    refresh_open_step,
)

from _calibration import assert_zcdp_pinned  # tests/online/_calibration.py

TAU = 0.125


def _unit_rows(rng, n, d):
    """Unit-space rows [u, 1], ||u|| <= 1 (some on the sphere)."""
    U = rng.normal(size=(n, d)) / math.sqrt(d) * rng.uniform(0.2, 2.0, size=(n, 1))
    U /= np.maximum(1.0, np.linalg.norm(U, axis=1, keepdims=True))
    return np.hstack([U, np.ones((n, 1))])


def _stream(loss=None, *, n_features=5, batch_size=10, horizon=20, epsilon=1.0, delta=1e-6,
            sampler="float", mechanism="blt", seed=0, intercept=True):
    loss = HuberLoss(TAU) if loss is None else loss
    return make_stream(
        "ftrl-momentum", loss=loss, n_features=n_features, radius=math.inf, alpha=0.0,
        row_bound=math.sqrt(2.0) if intercept else 1.0, batch_size=batch_size,
        horizon=horizon, epsilon=epsilon, delta=delta,
        noise=NoiseSpec("gaussian" if delta > 0 else "laplace", sampler),
        calibration="tight", feedback="full", rng=np.random.default_rng(seed),
        mechanism=mechanism, intercept=1.0 if intercept else None)


# ----------------------------------------------------------------- sensitivity
@pytest.mark.parametrize("loss, bound", [
    (HuberLoss(TAU), TAU), (LogisticLoss(), 1.0), (MultinomialLoss(3), math.sqrt(2.0))])
def test_a_replaced_row_moves_a_leaf_by_at_most_2L(loss, bound):
    # the leaf of a round: the gradients on the rows [u, c] at any model;
    # replacing one row (and its label) moves it by <= 2 L, L = |l'| R~
    rng = np.random.default_rng(1)
    d, b = 4, 12
    scale = np.ones(d + 1)
    scale[-1] = CONSTANT
    L = bound * math.hypot(1.0, CONSTANT)
    worst = 0.0

    def labels(n):
        if isinstance(loss, HuberLoss):
            return rng.uniform(-1, 1, n)
        if isinstance(loss, LogisticLoss):
            return rng.choice([-1.0, 1.0], n)
        return rng.integers(0, 3, n).astype(float)

    for _ in range(1500):
        X, y = _unit_rows(rng, b, d), labels(b)
        W = rng.normal(scale=5.0, size=(loss.n_outputs, d + 1))  # any model: no ball
        X2, y2 = X.copy(), y.copy()
        X2[5], y2[5] = _unit_rows(rng, 1, d)[0], labels(1)[0]

        def leaf(A, t):
            return _gradient_sum(A, loss.derivative(_margins(A, W * scale), t)) * scale

        worst = max(worst, np.linalg.norm(leaf(X, y) - leaf(X2, y2)) / (2 * L))
    assert worst <= 1.0 + 1e-12
    assert worst > 0.6  # the bound is approached (opposite clipped residuals)


def test_the_algorithm_states_the_derived_bound():
    algo = _stream(horizon=60)
    assert algo.row_bound == pytest.approx(math.hypot(1.0, CONSTANT))
    assert algo.lipschitz == pytest.approx(TAU * math.hypot(1.0, CONSTANT))
    assert algo._tree.sensitivity == pytest.approx(2 * algo.lipschitz)
    # the public step: b / (50 R~^2) times the noise rule's public scale
    # (60 rounds of 10 rows at epsilon 1: d nu^2 / n is past the free ratio)
    nu = algo._tree.noise_std_at([60])[0] / (2 * algo.lipschitz)
    scale = noise_step_scale(5, nu, 600, 60)
    assert scale > 1.0
    assert algo.learning_rate == pytest.approx(10 / (50 * 1.25 * scale))
    # without noise the rule is inert: b / (50 R~^2) exactly
    assert _stream(epsilon=math.inf, horizon=60).learning_rate == pytest.approx(
        10 / (50 * 1.25), rel=1e-12)
    no_intercept = _stream(intercept=False)
    assert no_intercept.row_bound == pytest.approx(1.0)
    assert no_intercept.lipschitz == pytest.approx(TAU)


# ----------------------------------------------------------------- the step's noise rule
def test_noise_step_scale_is_inert_without_noise():
    # open-ended or no noise: the step b / (50 R~^2)
    assert noise_step_scale(1001, 13.5, None, None) == 1.0
    assert noise_step_scale(1001, 0.0, 100_000, 1000) == 1.0


def test_noise_step_scale_joins_its_two_limits_in_quadrature():
    # sqrt(1 + (r / 0.2)^2), r = d nu^2 / n: King County at epsilon 1 (20
    # columns, nu 12.4, 17,290 rows in 173 rounds: r = 0.18, cut 1.34x where
    # max(1, r / 0.2) left it alone), d = 100 at epsilon 1 over 100,000 rows,
    # wine (12, 11.2, 3,950 in 79: r = 0.38, 2.15x where the maximum gave 1.9x)
    for d, nu, n, rounds in [(20, 12.4, 17_290, 173), (101, 13.5, 100_000, 1000),
                             (12, 11.2, 3_950, 79)]:
        x = d * nu**2 / n / 0.2
        assert noise_step_scale(d, nu, n, rounds) == pytest.approx(math.sqrt(1 + x * x))
    assert noise_step_scale(20, 12.4, 17_290, 173) == pytest.approx(1.338, abs=1e-3)
    assert noise_step_scale(200, 10.0, 100_000, 1000) == pytest.approx(math.sqrt(2))  # r = 0.2
    # each limit where the other is negligible: 1 for r << 0.2, r / 0.2 for r >> 0.2
    assert noise_step_scale(20, 0.1, 17_290, 173) == pytest.approx(1.0, abs=1e-6)
    big = noise_step_scale(1001, 13.5, 20_000, 1000, base_divisor=1.0)  # cap far away
    assert big == pytest.approx(1001 * 13.5**2 / 20_000 / 0.2, rel=0.01)
    # never below the old rule max(1, min(r / 0.2, cap)), never more than
    # sqrt(2) times it, and the same wherever the cap binds
    for d in (5, 20, 50, 101, 200, 400, 1001):
        x = d * 12.0**2 / 20_000 / 0.2
        cap = max(15 * 12.0 / 50, math.sqrt(x))
        old = max(1.0, min(x, cap))
        s = noise_step_scale(d, 12.0, 20_000, 200)
        assert old <= s <= math.sqrt(2) * old + 1e-12
        if x >= cap:
            assert s == pytest.approx(old)


def test_noise_step_scale_of_short_horizons_cuts_only_swamped_streams():
    # under 40 rounds (the heavy ball's transient) the stream is left alone
    # while r T = d nu^2 / b <= SHORT_ROUND_RATIO = 20 (r = d nu^2 / n, T the
    # planned rounds); from 40 rounds on the steady-state rule applies
    assert noise_step_scale(5, 9.0, 600, 12) == 1.0  # r T = 8.1
    assert noise_step_scale(5, 9.0, 1_950, 39) == 1.0  # r T = 8.1
    assert noise_step_scale(5, 20.0, 2_000, 40) > 1.0
    # past it the divisor grows like r T / 20, uncapped (d = 20 over 1,000
    # rows in 20 rounds at epsilon 0.5: r = 6.5, R^2 -2.8 with the full step)
    assert noise_step_scale(21, 17.65, 1_000, 20) == pytest.approx(21 * 17.65**2 / 1_000)
    assert noise_step_scale(51, 17.65, 1_000, 20) == pytest.approx(51 * 17.65**2 / 1_000)
    assert noise_step_scale(5, 20.0, 2_000, 39) == pytest.approx(39 / 20)  # r = 1
    assert noise_step_scale(5, 20.0, 2_000, 20) == 1.0  # r T = 20: not past it
    # a threshold on r of 20 / T: few rounds tolerate more noise
    assert noise_step_scale(21, 14.3, 300, 6) == pytest.approx(21 * 14.3**2 / 300 * 6 / 20)


def test_noise_step_scale_grows_with_the_ratio_up_to_its_cap():
    # between: sqrt(1 + (r / 0.2)^2) with r = d nu^2 / n (d = 1,000 at
    # epsilon 1: ~9.1, capped)
    r = 1001 * 13.5**2 / 100_000
    assert noise_step_scale(1001, 13.5, 100_000, 1000) == pytest.approx(
        min(math.hypot(1, r / 0.2), 15 * 13.5 / 50))
    assert noise_step_scale(101, 12.5, 40_000, 400) == pytest.approx(
        math.hypot(1, 101 * 12.5**2 / 40_000 / 0.2))
    # the cap: the step never falls below b / (15 nu R~^2)
    # (d = 1,000 at epsilon 1: r / 0.2 = 9.1 between the cap 4.05 and its square)
    assert noise_step_scale(1001, 13.5, 100_000, 1000) == pytest.approx(15 * 13.5 / 50)
    assert noise_step_scale(1001, 13.5, 20_000, 200, base_divisor=25.0) == pytest.approx(
        15 * 13.5 / 25)
    # far past the cap the step keeps shrinking like sqrt(r / 0.2): 2^17
    # columns over 100,000 rows at epsilon 1 (r ~ 240)
    r = (2**17 + 1) * 13.5**2 / 100_000
    assert noise_step_scale(2**17 + 1, 13.5, 100_000, 1000) == pytest.approx((r / 0.2) ** 0.5)
    assert noise_step_scale(2**17 + 1, 13.5, 100_000, 1000) > 15 * 13.5 / 50
    # monotone in d and nu, decreasing in n
    grid = [noise_step_scale(d, 13.5, 100_000, 1000) for d in (100, 300, 1000, 3000)]
    assert grid == sorted(grid)
    assert noise_step_scale(1001, 27.0, 100_000, 1000) > noise_step_scale(1001, 13.5, 100_000, 1000)
    assert noise_step_scale(301, 13.5, 200_000, 2000) < noise_step_scale(301, 13.5, 100_000, 1000)


@pytest.mark.parametrize("loss", [LogisticLoss(), MultinomialLoss(3)])
def test_the_noise_rule_leaves_the_classifier_losses_alone(loss):
    # the rule's derivation is about clipped residuals: Huber only
    assert _stream(loss, horizon=60).learning_rate == pytest.approx(10 / (50 * 1.25), rel=1e-12)


# ----------------------------------------------------------------- averaging
@pytest.mark.parametrize("loss, tail", [(HuberLoss(TAU), HUBER_TAIL), (LogisticLoss(), TAIL),
                                        (MultinomialLoss(3), TAIL)])
def test_the_huber_loss_averages_with_its_own_tail(loss, tail):
    # Huber: weights growing like s^(2/3) (tail 0.6); the classifier's losses keep 0.7
    assert (HUBER_TAIL, TAIL) == (0.6, 0.7)
    assert _stream(loss).tail == tail
    assert _stream(loss, horizon=60).tail == tail  # whatever the horizon or noise
    assert _stream(loss, epsilon=math.inf).tail == tail
    # a set tail is kept
    explicit = MomentumFTRL(
        loss=loss, n_features=5, alpha=0.0, row_bound=math.sqrt(2.0), batch_size=10,
        horizon=20, noise=NoiseSpec("gaussian", "float").with_multiplier(1.0),
        rng=np.random.default_rng(0), tail=0.9)
    assert explicit.tail == 0.9


def test_the_average_follows_rho_t_with_the_huber_tail():
    # avg_t = (1 - rho_t) avg_(t-1) + rho_t theta_t, rho_t = min(1, 1 / (0.6 t))
    algo = _stream(n_features=5, batch_size=10, horizon=20)
    rng = np.random.default_rng(5)
    average = np.zeros_like(algo._average)
    for t in range(1, 9):
        algo.learn(_unit_rows(rng, 10, 4), rng.uniform(-1, 1, 10))
        rho = min(1.0, 1.0 / (0.6 * t))
        average = (1 - rho) * average + rho * algo._theta
        np.testing.assert_allclose(algo._average, average, rtol=1e-12, atol=1e-15)


def test_the_noise_rule_reads_no_row():
    # the step is fixed when the stream is built, before any row: the same for
    # any data, so a function of the public terms only
    a, b = _stream(seed=0, horizon=60), _stream(seed=1, horizon=60)
    lr = a.learning_rate
    rng = np.random.default_rng(3)
    a.learn(_unit_rows(rng, 100, 4), rng.uniform(-1, 1, 100))
    assert a.learning_rate == lr == b.learning_rate


# ----------------------------------------------------------------- open horizon
def test_open_rule_rounds_are_the_rounds_so_far_from_40_on():
    assert [open_rule_rounds(t) for t in (1, 2, 39, 40, 41, 173, 10**6)] == [
        40, 40, 40, 40, 41, 173, 10**6]
    assert NOISE_MIN_ROUNDS == 40


def test_the_open_step_is_reread_every_round_then_16_times_a_doubling():
    assert all(refresh_open_step(t) for t in range(1, 64))
    for k in range(6, 20):
        hits = [t for t in range(2**k, 2**(k + 1)) if refresh_open_step(t)]
        assert len(hits) == 16 and hits[0] == 2**k
        assert set(np.diff(hits)) == {2 ** (k - 4)}


def _open_scale(algo, t):
    """The rule an open stream reads at round t, from its public terms."""
    T = max(t, 40)
    nu = algo._tree.noise_std_at([T])[0] / (2 * algo.lipschitz)
    return noise_step_scale(algo.n_features, nu, T * algo.batch_size, T)


@pytest.mark.parametrize("mechanism", ["blt", "tree"])
def test_an_open_stream_steps_by_the_rule_at_its_rounds_so_far(mechanism):
    # rounds of 100 rows: the cap (15 nu / 50) does not bind, so the step
    # follows sqrt(1 + (r_t / 0.2)^2) and grows with the rows (the BLT)
    algo = _stream(horizon=None, mechanism=mechanism, batch_size=100)
    r2 = 1.25  # R~^2
    assert algo._open_rule
    # before any row: the rule of a 40-round stream
    assert algo.learning_rate == pytest.approx(100 / (50 * r2 * _open_scale(algo, 1)))
    assert algo.learning_rate < 100 / (50 * r2)
    rng = np.random.default_rng(0)
    steps = []
    for t in range(1, 301):
        algo.learn(_unit_rows(rng, 100, 4), rng.uniform(-1, 1, 100))
        steps.append(algo.learning_rate)
        last = max(s for s in range(1, t + 1) if refresh_open_step(s))
        assert algo.learning_rate == pytest.approx(100 / (50 * r2 * _open_scale(algo, last)),
                                                   rel=1e-12)
    if mechanism == "blt":  # r_t ~ 1 / t: the step grows once past 40 rounds
        assert steps[39] == pytest.approx(steps[0])
        assert steps[299] > steps[99] > steps[39]


def test_an_open_stream_without_noise_keeps_its_step():
    algo = _stream(horizon=None, epsilon=math.inf)
    assert not algo._open_rule
    rng = np.random.default_rng(0)
    algo.learn(_unit_rows(rng, 500, 4), rng.uniform(-1, 1, 500))
    assert algo.learning_rate == 10 / (50.0 * 1.0 * algo.row_bound**2)  # exactly as before


def test_the_open_rule_leaves_a_known_horizon_and_the_classifier_alone():
    # a known horizon: one step, the planned rule, whatever the rounds done
    algo = _stream(horizon=60)
    lr = algo.learning_rate
    assert lr == 10 / (50.0 * algo._noise_step_scale(algo.loss) * algo.row_bound**2)
    rng = np.random.default_rng(0)
    for _ in range(6):
        algo.learn(_unit_rows(rng, 100, 4), rng.uniform(-1, 1, 100))
        assert algo.learning_rate == lr
    # the logistic loss has no rule, open or not
    clf = _stream(LogisticLoss(), horizon=None)
    assert not clf._open_rule and clf.learning_rate == 10 / (50.0 * clf.row_bound**2)


def test_the_open_step_reads_no_row_and_survives_a_checkpoint():
    # the step at round t is the same for any rows and any noise draw
    a, b = _stream(horizon=None, seed=0), _stream(horizon=None, seed=1)
    rng = np.random.default_rng(3)
    a.learn(_unit_rows(rng, 500, 4), rng.uniform(-1, 1, 500))
    b.learn(np.zeros((500, 5)), np.zeros(500))
    assert a.learning_rate == b.learning_rate
    saved = copy.copy(a)
    a.learn(_unit_rows(rng, 2_000, 4), rng.uniform(-1, 1, 2_000))
    assert a.learning_rate != saved.learning_rate
    assert saved.learning_rate == b.learning_rate and saved.n_rounds == 50


# ----------------------------------------------------------------- calibration
def test_the_blt_stream_is_one_gaussian_mechanism_pinned_against_dp_accounting():
    algo = _stream(epsilon=1.0, delta=1e-6, sampler="float", horizon=40)
    rng = np.random.default_rng(2)
    X = _unit_rows(rng, 400, 4)
    algo.learn(X, rng.uniform(-1, 1, 400))
    event = algo.event()
    assert isinstance(event, GaussianDpEvent)
    m = event.noise_multiplier
    accountant = PLDAccountant()
    accountant.compose(GaussianDpEvent(m))
    assert accountant.get_epsilon(1e-6) == pytest.approx(1.0, rel=1e-3)
    assert epsilon_spent(event, 1e-6)[0] == pytest.approx(1.0, rel=1e-6)
    # one budget for every release: fewer rounds cost no more
    assert epsilon_spent(algo.event(1), 1e-6)[0] <= epsilon_spent(event, 1e-6)[0]


def test_the_discrete_stream_is_zcdp_pinned_against_dp_accounting():
    algo = _stream(epsilon=1.0, delta=1e-6, sampler="discrete", horizon=40)
    event = algo.event(40)
    # dp-accounting's RDP accountant on the same rho gives the same budget
    assert_zcdp_pinned(event, 1.0, 1e-6)


def test_pure_dp_uses_the_tree_with_laplace_nodes():
    algo = _stream(epsilon=2.0, delta=0.0, mechanism="tree", horizon=16)
    assert epsilon_spent(algo.event(16), 0.0)[0] <= 2.0 + 1e-9


def test_the_first_release_carries_the_calibrated_noise():
    # zero rows: the leaf is 0, so theta_1 = -lr G_1 / b shows the noise of
    # the first prefix sum, whose std is the mechanism's own (m x 2L x sens(C))
    draws = []
    for seed in range(600):
        algo = _stream(batch_size=4, horizon=8, seed=seed)
        algo.learn(np.zeros((4, 5)), np.zeros(4))
        G = -algo.published[0] / algo._scale * algo.batch_size / algo.learning_rate
        draws.append(G)
    expected = float(algo._tree.noise_std_at(1)[0])
    assert expected > 0
    assert np.std(np.array(draws)) == pytest.approx(expected, rel=0.06)


# ----------------------------------------------------------------- accuracy
def test_without_noise_it_fits_the_huber_regression():
    rng = np.random.default_rng(3)
    X = _unit_rows(rng, 20_000, 4)
    w = np.array([0.5, -0.4, 0.3, 0.0, 0.1])
    y = np.clip(X @ w + rng.normal(scale=0.02, size=20_000), -1, 1)
    algo = _stream(n_features=5, batch_size=100, horizon=200, epsilon=math.inf)
    algo.learn(X, y)
    assert np.linalg.norm(algo.published[0] - w) < 0.05


def test_the_state_has_no_d_by_d_array():
    d = 400
    algo = _stream(n_features=d, batch_size=10, horizon=50)
    rng = np.random.default_rng(4)
    algo.learn(_unit_rows(rng, 100, d - 1), rng.uniform(-1, 1, 100))
    sizes = [v.size for obj in (algo, algo._tree) for v in vars(obj).values()
             if isinstance(v, np.ndarray)]
    assert max(sizes) < 20 * d  # buffers x d at most, never d x d


# ----------------------------------------------------------------- rounds and refusals
def test_the_round_rule_reads_the_public_horizon_only():
    assert momentum_round(None) == 100
    assert momentum_round(50_000) == 100 and momentum_round(10_000) == 100
    assert momentum_round(3_918) == 50


@pytest.mark.parametrize("horizon", [10_000, 17_290, 32_561, 99_999, 100_000])
def test_horizons_up_to_100000_rows_keep_rounds_of_100(horizon):
    # every real table of the benchmarks: today's rounds, so today's models
    assert momentum_round(horizon) == 100


@pytest.mark.parametrize("horizon, rows", [(100_001, 101), (200_000, 200), (250_500, 251),
                                           (1_000_000, 1_000)])
def test_longer_horizons_take_at_most_1000_bigger_rounds(horizon, rows):
    b = momentum_round(horizon)
    assert b == rows and -(-horizon // b) <= 1_000  # ceil(horizon / b) planned rounds
    assert momentum_round(horizon - 1) <= b  # never smaller rounds for a longer horizon


@pytest.mark.parametrize("horizon", [1_000_001, 10**7, 10**9])
def test_rounds_stop_growing_at_1000_rows(horizon):
    assert momentum_round(horizon) == 1_000


def test_the_step_is_capped_at_step_rows_and_unchanged_without_it():
    assert momentum_step_rows() == 100 and momentum_step_rows(3) == 300
    r2 = 1.25  # R~^2: unit rows and the constant column 0.5
    assert _stream(batch_size=400).learning_rate == pytest.approx(400 / (50 * r2))
    capped = make_stream(
        "ftrl-momentum", loss=HuberLoss(TAU), n_features=5, radius=math.inf, alpha=0.0,
        row_bound=math.sqrt(2.0), batch_size=400, horizon=20, epsilon=1.0, delta=1e-6,
        noise=NoiseSpec("gaussian", "float"), calibration="tight", feedback="full",
        rng=np.random.default_rng(0), mechanism="blt", intercept=1.0, step_rows=100)
    assert capped.learning_rate == pytest.approx(100 / (50 * r2))
    small = make_stream(
        "ftrl-momentum", loss=HuberLoss(TAU), n_features=5, radius=math.inf, alpha=0.0,
        row_bound=math.sqrt(2.0), batch_size=50, horizon=20, epsilon=1.0, delta=1e-6,
        noise=NoiseSpec("gaussian", "float"), calibration="tight", feedback="full",
        rng=np.random.default_rng(0), mechanism="blt", intercept=1.0, step_rows=100)
    assert small.learning_rate == pytest.approx(50 / (50 * r2))  # below the cap: b's own


def test_the_horizon_is_refused_before_anything_changes():
    algo = _stream(batch_size=10, horizon=2)
    rng = np.random.default_rng(5)
    X = _unit_rows(rng, 30, 4)
    with pytest.raises(BudgetExhaustedError):
        algo.learn(X, np.zeros(30))
    assert algo.n_rounds == 0 and algo._tree.n_leaves == 0


def test_paper_calibration_is_refused_by_name():
    from skdpol import PrivateOnlineRegressor
    est = PrivateOnlineRegressor(algorithm="ftrl-momentum", noise_calibration="paper",
                                 data_norm=1.0, y_bound=1.0, horizon=10)
    with pytest.raises(ValueError, match="ftrl-momentum"):
        est.partial_fit(np.zeros((10, 2)), np.zeros(10))
    assert not hasattr(est, "coef_")


def test_a_multinomial_stream_releases_one_row_per_class():
    algo = _stream(MultinomialLoss(3), n_features=3, batch_size=5, horizon=4)
    rng = np.random.default_rng(6)
    algo.learn(_unit_rows(rng, 20, 2), rng.integers(0, 3, 20).astype(float))
    assert algo.published.shape == (3, 3) and algo.n_rounds == 4
    assert isinstance(algo, MomentumFTRL)


@pytest.mark.parametrize("k", [1, 3])
def test_the_round_products_take_sparse_rows_too(k):
    # the estimators do not accept sparse input yet; the round's products are
    # written with @ so that a scipy.sparse chunk gives the same numbers
    from scipy import sparse
    rng = np.random.default_rng(7)
    X = _unit_rows(rng, 30, 6)
    X[X < 0.1] = 0.0
    W, D = rng.normal(size=(k, 7)), rng.normal(size=(30, k))
    for form in (sparse.csr_matrix, sparse.csr_array):
        S = form(X)
        np.testing.assert_allclose(_margins(S, W), _margins(X, W), rtol=1e-12)
        np.testing.assert_allclose(_gradient_sum(S, D), _gradient_sum(X, D), rtol=1e-12)


@pytest.mark.parametrize("d", [9, COLUMN_ONLY_WIDTH + 1])
def test_column_scaled_is_the_product_with_the_column_scales_bit_for_bit(d):
    # x * 1.0 == x in IEEE arithmetic: wide rows multiply the constant column only
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(3, d)) * 10.0 ** rng.integers(-300, 300, size=(3, d))
    theta[0, :4] = [-0.0, 0.0, np.inf, -np.inf]
    theta[1, -1] = -0.0
    theta[2, 0] = 5e-324  # subnormal
    scale = np.ones(d)
    scale[-1] = CONSTANT
    want = (theta * scale).tobytes()
    got = _column_scaled(theta, CONSTANT, scale)
    assert got.tobytes() == want
    assert not np.shares_memory(got, theta)  # a new array: rounds may finish it in place
    fresh = theta.copy()
    assert _column_scaled(fresh, CONSTANT, scale, in_place=True) is fresh
    assert fresh.tobytes() == want
    # without an intercept the scales are all 1: theta itself (never written in place)
    assert _column_scaled(theta, None, np.ones(d)) is theta
    assert (theta * np.ones(d)).tobytes() == theta.tobytes()
