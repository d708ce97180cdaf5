"""Numeric core of seed 001: Lovasz extension, rounding, bandit estimator, PFTAL."""

import itertools
import pickle
import time

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from skdpol.accounting import calibrate_noise_multiplier, epsilon_spent
from skdpol.mechanisms import NoiseSpec, tree_event
from skdpol.submodular import (
    ConcaveMassCost,
    CutCost,
    SubmodularPFTAL,
    bandit_gradient,
    bandit_leaf_bound,
    bandit_modular_leaf_bound,
    bandit_probabilities,
    bandit_sample,
    chain,
    clipped_gaussian_mean,
    lovasz_extension,
    lovasz_subgradient,
    make_submodular_stream,
    range_leaf_bound,
    threshold_round,
)


# ---------------------------------------------------------------- helpers
def all_masks(n):
    return np.array(list(itertools.product([False, True], repeat=n)))


def table_cost(table):
    """A batch cost reading f from a table indexed by the bits of the set."""
    n = int(np.log2(table.size))
    powers = 1 << np.arange(n)

    def cost(masks):
        return table[np.asarray(masks, dtype=np.int64) @ powers]
    return cost


def table_of(cost, n):
    masks = all_masks(n)
    table = np.empty(2**n)
    table[masks.astype(np.int64) @ (1 << np.arange(n))] = cost(masks)
    return table


def is_submodular(table, n, tol=1e-9):
    idx = np.arange(2**n)
    for i, j in itertools.combinations(range(n), 2):
        S = idx[((idx >> i) & 1 == 0) & ((idx >> j) & 1 == 0)]
        lhs = table[S | 1 << i] + table[S | 1 << j]
        if np.any(lhs < table[S | 1 << i | 1 << j] + table[S] - tol):
            return False
    return True


def random_submodular(n, rng, bound=None):
    """Concave-of-modular terms + a cut + a modular term, as a table.

    With ``bound``, rescaled affinely (positive factor) onto [-bound, bound],
    which keeps submodularity and makes the range bound hit exactly.
    """
    masks = all_masks(n).astype(float)
    values = masks @ rng.normal(0, 1, n)
    for phi in (np.sqrt, np.log1p, lambda m: np.minimum(m, rng.uniform(0.5, 2))):
        values += rng.exponential() * phi(masks @ rng.exponential(1, n))
    W = np.triu(rng.exponential(1, (n, n)) * (rng.random((n, n)) < 0.4), 1)
    values += rng.exponential() * np.einsum("ki,ki->k", masks @ (W + W.T), 1 - masks)
    table = np.empty(2**n)
    table[masks.astype(np.int64) @ (1 << np.arange(n))] = values
    if bound is not None:
        lo, hi = table.min(), table.max()
        table = bound * (2 * (table - lo) / (hi - lo) - 1)
    return table


# ----------------------------------------------------------- Lovasz extension
def test_chain_weights_rebuild_x_and_batch_matches_single():
    rng = np.random.default_rng(0)
    X = rng.random((20, 6))
    X[0, :3] = 0.4  # ties
    order, weights, masks = chain(X)
    assert np.all(weights >= -1e-15)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.einsum("bi,bin->bn", weights, masks), X, atol=1e-12)
    cost = table_cost(random_submodular(6, rng))
    g = lovasz_subgradient(cost, X)
    v = lovasz_extension(cost, X)
    for b in range(3):
        np.testing.assert_allclose(g[b], lovasz_subgradient(cost, X[b]))
        assert v[b] == pytest.approx(lovasz_extension(cost, X[b]))
    with pytest.raises(ValueError, match="cube"):
        chain([0.5, 1.2])


def test_extension_equals_f_on_vertices():
    rng = np.random.default_rng(1)
    table = rng.normal(size=2**5)  # any set function, submodular or not
    masks = all_masks(5)
    np.testing.assert_allclose(lovasz_extension(table_cost(table), masks.astype(float)),
                               table_cost(table)(masks), atol=1e-12)


def _jensen_gaps(cost, n, rng, pairs=400):
    X, Y = rng.random((pairs, n)), rng.random((pairs, n))
    mid = lovasz_extension(cost, (X + Y) / 2)
    return mid - (lovasz_extension(cost, X) + lovasz_extension(cost, Y)) / 2


def test_extension_convex_iff_submodular():
    rng = np.random.default_rng(2)
    for _ in range(5):
        table = random_submodular(6, rng)
        assert is_submodular(table, 6)
        assert _jensen_gaps(table_cost(table), 6, rng).max() <= 1e-10
    # control: a random (non-submodular) function must show a Jensen violation
    table = rng.normal(size=2**6)
    assert not is_submodular(table, 6)
    assert _jensen_gaps(table_cost(table), 6, rng).max() > 1e-3


def test_subgradient_inequality():
    rng = np.random.default_rng(3)
    for _ in range(5):
        cost = table_cost(random_submodular(6, rng))
        X, Y = rng.random((300, 6)), rng.random((300, 6))
        X[:50] = np.round(X[:50], 1)  # ties and faces
        lhs = lovasz_extension(cost, Y)
        rhs = lovasz_extension(cost, X) + np.einsum("bi,bi->b", lovasz_subgradient(cost, X), Y - X)
        assert np.all(lhs >= rhs - 1e-10)


# --------------------------------------------------------------- rounding
def test_threshold_rounding_unbiased():
    rng = np.random.default_rng(4)
    n, draws = 6, 40_000
    table = random_submodular(n, rng)
    x = np.array([0.0, 1.0, 0.3, 0.3, 0.85, 0.05])
    sets = threshold_round(np.tile(x, (draws, 1)), rng)
    assert not sets[:, 0].any() and sets[:, 1].all()
    values = table_cost(table)(sets)
    se = values.std(ddof=1) / np.sqrt(draws)
    assert abs(values.mean() - lovasz_extension(table_cost(table), x)) < 5 * se
    freq_se = np.sqrt(x * (1 - x) / draws) + 1e-12
    assert np.all(np.abs(sets.mean(axis=0) - x) <= 5 * freq_se)


# ------------------------------------------------------------------ bandit
class _Coin:
    """A stand-in generator whose random() is fixed (to enumerate the sign)."""

    def __init__(self, u):
        self.u = u

    def random(self):
        return self.u


def bandit_expectation(cost, x, mu):
    """E g^ by enumerating the chain index i and the sign s."""
    order, weights, masks = chain(x)
    n = x.size
    rho = bandit_probabilities(weights, mu)
    values = cost(masks)
    mean = np.zeros(n)
    for i in range(n + 1):
        for u in (0.25, 0.75):  # s = +1, s = -1, each with probability 1/2
            mean += 0.5 * rho[i] * bandit_gradient(values[i], i, rho[i], order, n, _Coin(u))
    return mean


@pytest.mark.parametrize("n", [1, 2, 5])
def test_bandit_estimator_exactly_unbiased(n):
    rng = np.random.default_rng(5)
    for _ in range(10):
        cost = table_cost(random_submodular(n, rng))
        x = rng.random(n)
        if n > 2:
            x[1] = x[2]  # a tie: lambda = 0, only exploration reaches that set
        np.testing.assert_allclose(bandit_expectation(cost, x, 0.2),
                                   lovasz_subgradient(cost, x), atol=1e-10)


def test_bandit_estimator_unbiased_monte_carlo():
    rng = np.random.default_rng(6)
    n, draws, mu = 4, 40_000, 0.3
    cost = table_cost(random_submodular(n, rng))
    x = np.array([0.7, 0.2, 0.2, 0.9])
    est = np.empty((draws, n))
    for k in range(draws):
        i, mask, rho_i, order, _ = bandit_sample(x, mu, rng)
        est[k] = bandit_gradient(cost(mask[None, :])[0], i, rho_i, order, n, rng)
    se = est.std(axis=0, ddof=1) / np.sqrt(draws)
    assert np.all(np.abs(est.mean(axis=0) - lovasz_subgradient(cost, x)) < 5 * se)


# ------------------------------------------------------------- sensitivity
def test_range_leaf_bound_holds_and_is_tight():
    rng = np.random.default_rng(7)
    B, ratios, pair_ratios = 2.0, [], []
    for n in (2, 3, 5):
        for _ in range(60):
            f, h = (table_cost(random_submodular(n, rng, bound=B)) for _ in range(2))
            X = rng.random((40, n))
            X[:20] = np.round(X[:20])  # vertices and ties reach the extremes
            gf, gh = lovasz_subgradient(f, X), lovasz_subgradient(h, X)
            ratios.append(np.linalg.norm(gf, axis=1).max() / range_leaf_bound(B))
            pair_ratios.append(np.linalg.norm(gf - gh, axis=1).max() / (2 * range_leaf_bound(B)))
    assert max(ratios) <= 1 + 1e-12 and max(pair_ratios) <= 1 + 1e-12
    assert max(ratios) > 0.75 and max(pair_ratios) > 0.5  # not vacuous
    print(f"range bound: max |g| / 2 sqrt2 B = {max(ratios):.3f}, "
          f"max |g - g'| / 4 sqrt2 B = {max(pair_ratios):.3f}")
    # the extremal submodular function of the proof attains the per-leaf bound
    table = np.array([-B, B, -B, -B])  # f({}), f({0}), f({1}), f({0, 1})
    assert is_submodular(table, 2)
    g = lovasz_subgradient(table_cost(table), [1.0, 0.0])
    assert np.linalg.norm(g) == pytest.approx(range_leaf_bound(B))
    # the worst submodular pair found by linear programming (n <= 5): sqrt(24) B,
    # sqrt(3) / 2 of the enforced bound (which f, -f attain for arbitrary costs)
    f = B * np.array([-1, 1, -1, -1, -1, 1, -1, -1.0])
    h = B * np.array([-1, -1, 1, 1, -1, -1, -1, -1.0])
    assert is_submodular(f, 3) and is_submodular(h, 3)
    x = [0.9, 0.5, 0.1]
    diff = lovasz_subgradient(table_cost(f), x) - lovasz_subgradient(table_cost(h), x)
    np.testing.assert_allclose(diff, [2 * B, -4 * B, 2 * B])
    assert np.linalg.norm(diff) / (2 * range_leaf_bound(B)) == pytest.approx(np.sqrt(3) / 2)


def test_range_leaf_is_enforced_for_any_cost():
    rng = np.random.default_rng(8)
    n, B = 12, 1.0
    learner = SubmodularPFTAL(n_items=n, cost_bound=B, alpha=1.0, noise=NoiseSpec(multiplier=0.0),
                              rng=rng)
    assert learner.sensitivity == pytest.approx(4 * np.sqrt(2) * B)
    for _ in range(20):
        wild = table_cost(1e6 * rng.normal(size=2**n))  # neither submodular nor in range
        learner.x = rng.random(n)
        assert np.linalg.norm(learner._range_leaf(wild)) <= learner.leaf_norm * (1 + 1e-12)


def test_bandit_leaf_sensitivity():
    rng = np.random.default_rng(9)
    B, mu, ratios = 1.5, 0.25, []
    for n in (1, 3, 6):
        bound = 2 * bandit_leaf_bound(B, n, mu)
        for _ in range(300):
            f, h = (table_cost(random_submodular(n, rng, bound=B)) for _ in range(2))
            x = np.round(rng.random(n), 1)  # ties make rho_i = mu / (n + 1)
            seed = int(rng.integers(2**32))
            leaves = []
            for cost in (f, h):  # neighbours share the curator's coins
                coins = np.random.default_rng(seed)
                i, mask, rho_i, order, _ = bandit_sample(x, mu, coins)
                leaves.append(bandit_gradient(cost(mask[None, :])[0], i, rho_i, order, n, coins))
            ratios.append(np.linalg.norm(leaves[0] - leaves[1]) / bound)
    assert max(ratios) <= 1 + 1e-12 and max(ratios) > 0.5
    print(f"bandit bound: max |g^ - g^'| / (4 B (n + 1) / mu) = {max(ratios):.3f}")


def _explored_leaf(learner, j, value):
    learner._pending = j  # the curator's coins: visitor shown {j}
    return learner._bandit_leaf(value)


@pytest.mark.parametrize("n", [1, 3, 6])
def test_bandit_modular_estimator_exactly_unbiased(n):
    # a visitor explores (probability mu) a uniform singleton {j}, else gives 0:
    # E estimate = m(r), and with the exact public part dh_L(x) it is the full
    # Lovasz subgradient of f(.; r) at x
    rng = np.random.default_rng(21)
    W = rng.random((n, n))
    for cost in (ConcaveMassCost(scale=0.8, weights=rng.random(n)), CutCost(W + W.T, 0.3)):
        learner = SubmodularPFTAL(n_items=n, cost=cost, alpha=1.0, noise=NoiseSpec(multiplier=0.0),
                                  feedback="bandit", mu=0.3, rng=rng)
        assert learner.leaf_bound == "modular"
        for _ in range(5):
            row, x = rng.uniform(-1.5, 1.5, n), rng.random(n)
            singles = np.eye(n, dtype=bool)
            mean = sum(learner.mu / n * _explored_leaf(learner, j, cost(singles[j:j + 1], row)[0])
                       for j in range(n))
            np.testing.assert_allclose(mean, cost.modular(row[None, :])[0], atol=1e-12)
            np.testing.assert_allclose(mean + lovasz_subgradient(cost.public, x),
                                       lovasz_subgradient(lambda m: cost(m, row), x),
                                       atol=1e-12)
            learner._pending = None  # a visitor who did not explore
            assert not learner._bandit_leaf(5.0).any()


def test_bandit_modular_leaf_sensitivity_holds_for_any_value():
    rng = np.random.default_rng(22)
    n, mu, cost = 5, 0.2, ConcaveMassCost(scale=0.7)
    learner = SubmodularPFTAL(n_items=n, cost=cost, alpha=1.0, noise=NoiseSpec(multiplier=0.0),
                              feedback="bandit", mu=mu, batch_size=1, rng=rng)
    assert learner.sensitivity == pytest.approx(2 * n * cost.row_bound / mu)
    assert learner.leaf_norm == pytest.approx(bandit_modular_leaf_bound(1.0, n, mu))
    gaps = []
    for _ in range(200):
        j = int(rng.integers(n))
        v, w = rng.normal(0, 10, 2)  # any told values, honest or not
        a, c = _explored_leaf(learner, j, v), _explored_leaf(learner, j, w)
        assert np.linalg.norm(a) <= learner.leaf_norm * (1 + 1e-12)
        gaps.append(np.linalg.norm(a - c) / learner.sensitivity)
    assert max(gaps) <= 1 + 1e-12 and max(gaps) > 0.99  # attained: values beyond the range


def test_modular_leaf_sensitivity_of_builtin_costs():
    rng = np.random.default_rng(10)
    n = 7
    W = rng.random((n, n))
    for cost in (ConcaveMassCost(scale=0.8, weights=rng.random(n)), CutCost(W + W.T, 0.3)):
        learner = SubmodularPFTAL(n_items=n, cost=cost, alpha=1.0, noise=NoiseSpec(multiplier=0.0),
                                  rng=rng)
        assert learner.leaf_bound == "modular"
        assert learner.sensitivity == pytest.approx(2 * np.sqrt(n))
        worst = 0.0
        for _ in range(200):
            x = rng.random(n)
            r, s = 3 * rng.normal(size=(2, n))
            diff = (lovasz_subgradient(lambda m: cost(m, r), x)
                    - lovasz_subgradient(lambda m: cost(m, s), x))
            worst = max(worst, np.linalg.norm(diff) / learner.sensitivity)
        assert 0.7 < worst <= 1 + 1e-12


# ---------------------------------------------------------------- the costs
@pytest.mark.parametrize("make", [
    lambda rng, n: ConcaveMassCost(scale=rng.exponential(), weights=rng.random(n)),
    lambda rng, n: CutCost(np.abs(np.corrcoef(rng.normal(size=(n, 30)))), rng.exponential()),
])
def test_builtin_costs_are_submodular_and_in_range(make):
    rng = np.random.default_rng(11)
    n = 9
    for _ in range(10):
        cost, row = make(rng, n), 2 * rng.normal(size=n)
        # diminishing returns on random A subset of B, i outside B
        B = rng.random((500, n)) < 0.6
        A = B & (rng.random((500, n)) < 0.5)
        i = rng.integers(n, size=500)
        keep = ~B[np.arange(500), i]
        A, B, i = A[keep], B[keep], i[keep]
        Ai, Bi = A.copy(), B.copy()
        Ai[np.arange(i.size), i] = Bi[np.arange(i.size), i] = True
        gain_A = cost(Ai, row) - cost(A, row)
        gain_B = cost(Bi, row) - cost(B, row)
        assert np.all(gain_A >= gain_B - 1e-12)
        table = table_of(lambda m: cost(m, row), n)
        assert is_submodular(table, n)
        assert np.abs(table).max() <= cost.bound(n)


# ------------------------------------------------------------ cost errors
@pytest.mark.parametrize("bad, match", [
    (lambda m: np.full(m.shape[0], np.nan), "NaN or infinity"),
    (lambda m: np.append(np.zeros(m.shape[0] - 1), np.inf), "NaN or infinity"),
    (lambda m: np.zeros(m.shape[0] + 1), "shape"),
    (lambda m: np.zeros((m.shape[0], 1)), "shape"),
    (lambda m: 3.0, "shape"),
    (lambda m: np.array(["a"] * m.shape[0]), "real numbers"),
])
def test_cost_errors_refused_before_any_change(bad, match):
    learner = SubmodularPFTAL(n_items=4, cost_bound=1.0, alpha=1.0, noise=NoiseSpec(multiplier=1.0),
                              horizon=10, rng=np.random.default_rng(12))
    learner.tell(lambda m: m.sum(axis=1) * 0.1)
    before = pickle.dumps(learner)
    with pytest.raises(ValueError, match=match):
        learner.tell(bad)
    assert pickle.dumps(learner) == before


@pytest.mark.parametrize("value", [np.nan, np.inf, np.ones(2), "x", [[1.0, 2.0]]])
def test_bandit_value_errors_refused_before_any_change(value):
    learner = SubmodularPFTAL(n_items=4, cost_bound=1.0, alpha=1.0, noise=NoiseSpec(multiplier=1.0),
                              feedback="bandit", mu=0.2, rng=np.random.default_rng(13))
    before = pickle.dumps(learner)
    with pytest.raises(ValueError):
        learner.tell(value)
    assert pickle.dumps(learner) == before
    learner.tell(np.array([0.5]))  # a one-element array is a scalar
    assert learner.n_rounds == 1


def test_learn_refuses_bad_rows_and_costs():
    learner = SubmodularPFTAL(n_items=3, cost=lambda m, r: np.full(m.shape[0], r[0]),
                              cost_bound=1.0, alpha=1.0, noise=NoiseSpec(multiplier=0.0),
                              rng=np.random.default_rng(14))
    with pytest.raises(ValueError, match="finite"):
        learner.learn(np.array([[0.0, 1.0, np.nan]]))
    assert learner.n_rounds == 0


# ------------------------------------------------------------ the learner
def test_update_is_ftal_over_the_box():
    """Noise-free: x_{t+1} = Pi_C(mean x_tau - G_t / (alpha t)), G_t with the alpha x_tau."""
    rng = np.random.default_rng(15)
    stream = make_submodular_stream(n_items=5, n_rounds=60, random_state=0)
    alpha = 0.3
    learner = SubmodularPFTAL(n_items=5, cost=stream.cost, cost_bound=stream.cost.bound(5),
                              alpha=alpha, noise=NoiseSpec(multiplier=0.0), rng=rng, leaf_bound="range")
    points, sets = learner.learn(stream.rows, trace=True)
    G = np.zeros(5)
    for t, row in enumerate(stream.rows, start=1):
        G += lovasz_subgradient(lambda m: stream.cost(m, row), points[t - 1]) \
            + alpha * points[t - 1]
        expected = np.clip(points[:t].mean(axis=0) - G / (alpha * t), 0, 1)
        following = points[t] if t < len(points) else learner.x
        np.testing.assert_allclose(following, expected, atol=1e-12)
    assert sets.shape == points.shape == (60, 5)


def test_pickle_resume_continues_exactly():
    stream = make_submodular_stream(n_items=6, n_rounds=200, random_state=1)
    make = lambda: SubmodularPFTAL(n_items=6, cost=stream.cost, alpha=0.1,  # noqa: E731
                                   noise=NoiseSpec(multiplier=2.0), horizon=200,
                                   rng=np.random.default_rng(16))
    whole, part = make(), make()
    whole.learn(stream.rows)
    part.learn(stream.rows[:77])
    part = pickle.loads(pickle.dumps(part))
    part.learn(stream.rows[77:])
    np.testing.assert_array_equal(whole.x, part.x)
    np.testing.assert_array_equal(whole.selected, part.selected)


def test_stream_planted_set_is_the_minimiser():
    stream = make_submodular_stream(n_items=8, n_rounds=10, random_state=2)
    masks = all_masks(8)
    values = stream.expected_cost(masks)
    best = masks[np.argmin(values)]
    np.testing.assert_array_equal(best, stream.planted)
    assert np.sort(values)[1] > values.min() + 1e-3  # unique, with a margin
    exact = quad(lambda z: np.clip(z, -1, 1) * norm.pdf(z, 0.5, 1.3), -np.inf, np.inf)[0]
    assert clipped_gaussian_mean(0.5, 1.3) == pytest.approx(exact, abs=1e-9)


def _regret(stream, points):
    return lovasz_extension(stream.expected_cost, points) - stream.optimal_cost


def test_regret_falls_full_information_epsilon_one():
    n, T, epsilon, delta = 8, 4000, 1.0, 1e-5
    m = calibrate_noise_multiplier(lambda m: tree_event(noise_multiplier=m, horizon=T),
                                   epsilon, delta)
    q = T // 4
    for seed in range(2):
        stream = make_submodular_stream(n_items=n, n_rounds=T, random_state=seed)
        learner = SubmodularPFTAL(n_items=n, cost=stream.cost, alpha=0.03, noise=NoiseSpec(multiplier=m),
                                  horizon=T, rng=np.random.default_rng(seed))
        points, _ = learner.learn(stream.rows, trace=True)
        assert epsilon_spent(learner.event(), delta)[0] <= epsilon + 1e-9
        regret = _regret(stream, points)
        first, last = regret[:q].mean(), regret[-q:].mean()
        print(f"seed {seed}: average regret first quarter {first:.4f}, last {last:.4f}")
        assert last < 0.3 * first
        # control: a player that does not learn keeps its average regret
        idle = _regret(stream, np.random.default_rng(seed).random((T, n)))
        assert 0.9 < idle[-q:].mean() / idle[:q].mean() < 1.1


@pytest.mark.parametrize("leaf_bound", ["range", "modular"])
def test_bandit_learner_runs_and_spends_its_budget(leaf_bound):
    n, T = 5, 600
    stream = make_submodular_stream(n_items=n, n_rounds=T, random_state=3)
    m = calibrate_noise_multiplier(lambda m: tree_event(noise_multiplier=m, horizon=T,
                                                        noise="laplace"), 1.0, 0.0)
    learner = SubmodularPFTAL(n_items=n, cost=stream.cost, alpha=1.0,
                              noise=NoiseSpec("laplace", multiplier=m),
                              feedback="bandit", mu=0.3, horizon=T,
                              rng=np.random.default_rng(17),
                              **({} if leaf_bound == "modular" else {"leaf_bound": "range"}))
    assert learner.leaf_bound == leaf_bound  # "auto" picks "modular" for a built-in cost
    expected = (4 * stream.cost.bound(n) * (n + 1) / 0.3 if leaf_bound == "range"
                else 2 * n * stream.cost.row_bound / 0.3)
    assert learner.sensitivity == pytest.approx(expected)
    points, sets = learner.learn(stream.rows, trace=True)
    assert points.shape == sets.shape == (T, n)
    assert epsilon_spent(learner.event(), 0.0)[0] == pytest.approx(1.0, rel=1e-6)


def test_speed_full_information_n50():
    n, T = 50, 3000
    stream = make_submodular_stream(n_items=n, n_rounds=T, random_state=4)
    learner = SubmodularPFTAL(n_items=n, cost=stream.cost, alpha=0.05, noise=NoiseSpec(multiplier=5.0),
                              horizon=T, rng=np.random.default_rng(18))
    start = time.perf_counter()
    learner.learn(stream.rows)
    print(f"full information, n = 50: {T / (time.perf_counter() - start):.0f} rounds/s")
