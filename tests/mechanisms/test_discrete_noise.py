"""The hardened noise path: exact samplers, the grid, zCDP accounting, the tree.

The audits of the discrete mechanisms are in test_mechanism_audit.py; the
estimators' resume / side-door / transaction tests run them through the
``discrete`` cases of test_hardening.py.
"""

import math
import pickle
import random
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting import ZCDpEvent
from dp_accounting.rdp import RdpAccountant
from scipy import stats

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.accounting import calibrate_noise_multiplier, epsilon_spent
from skdpol.mechanisms import PrivatePrefixSum, noise_event, perturb, tree_event
from skdpol.mechanisms import _discrete, _exact
from skdpol.mechanisms._discrete import (
    _gaussian_parameters,
    _laplace_parameters,
    bernoulli_exp,
    discrete_gaussian_vec,
    discrete_laplace_vec,
    discrete_gaussian,
    discrete_laplace,
    discrete_noise,
    grid_sensitivity,
    grid_step,
    quantise,
)


def _chi_square_p(draws, log_pmf, support):
    """p-value of a chi-square test of ``draws`` against a pmf on ``support``
    (the tails beyond it pooled into one cell)."""
    ks = np.arange(-support, support + 1)
    p = np.exp(log_pmf(ks))
    p /= p.sum() + np.exp(log_pmf(np.array([support + 1]))).item() * 2  # rough tail mass
    observed = np.array([(draws == k).sum() for k in ks] + [(np.abs(draws) > support).sum()])
    expected = np.append(p, max(1.0 - p.sum(), 0.0)) * draws.size
    keep = expected > 5
    rest = observed[~keep].sum(), expected[~keep].sum()
    observed = np.append(observed[keep], rest[0])
    expected = np.append(expected[keep], rest[1])
    expected *= observed.sum() / expected.sum()
    return stats.chisquare(observed, expected).pvalue


# ----------------------------------------------------------------- exact draws
@pytest.mark.parametrize("num, den", [(0, 1), (1, 3), (1, 1), (7, 4), (5, 2)])
def test_bernoulli_exp_has_the_exact_probability(num, den):
    bits = random.Random(0)
    n = 40_000
    hits = sum(bernoulli_exp(bits, num, den) for _ in range(n))
    p = math.exp(-num / den)
    assert abs(hits / n - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


@pytest.mark.parametrize("sigma2", [(5, 2), (40, 1), (1, 7)])
def test_discrete_gaussian_matches_its_pmf(sigma2):
    num, den = sigma2
    bits = random.Random(1)
    draws = np.array([discrete_gaussian(bits, num, den) for _ in range(20_000)])
    s2 = num / den
    support = int(5 * math.sqrt(s2)) + 2
    assert _chi_square_p(draws, lambda k: -k**2 / (2 * s2), support) > 1e-3
    # the discrete Gaussian is symmetric and its variance is below sigma^2
    assert abs(draws.mean()) < 5 * math.sqrt(s2 / draws.size)
    assert draws.var() < s2 * (1 + 5 * math.sqrt(2 / draws.size))


@pytest.mark.parametrize("t, s", [(3, 2), (1, 1), (10, 3)])
def test_discrete_laplace_matches_its_pmf(t, s):
    bits = random.Random(2)
    draws = np.array([discrete_laplace(bits, t, s) for _ in range(20_000)])
    scale = t / s
    support = int(8 * scale) + 2
    assert _chi_square_p(draws, lambda k: -np.abs(k) / scale, support) > 1e-3


# the vectorised path (discrete_noise's default, mechanisms/_exact.py and its own tests in
# test_exact_sampler.py): exact brackets of exp(-x) and the laws it draws
@pytest.mark.parametrize("x", [Fraction(1, 3), Fraction(1), Fraction(7), Fraction(30),
                               Fraction(255, 2**40), Fraction(12345, 2**20)])
def test_thresholds_are_the_exact_binary_expansion_of_exp(x):
    getcontext().prec = 80
    reference = (Decimal(2) ** 96 * (-Decimal(x.numerator) / Decimal(x.denominator)).exp())
    assert _exact.floor_exp_neg(x, 96) == int(reference)  # floor: the value is positive
    lo, hi = _exact.exp_neg_bracket(x, 70)
    assert lo <= Fraction(reference / Decimal(2) ** 96) <= hi or hi - lo <= Fraction(1, 2**70)


def test_a_tie_is_resolved_with_the_same_uniforms_later_bits():
    # u's first 32 bits equal floor(2^32 v): then u < v with probability
    # frac(2^32 v), which only reading u's later bits can produce
    x = Fraction(1, 3)
    T = _exact.floor_exp_neg(x, 32)
    frac = float(_exact.floor_exp_neg(x, 96) - T * 2**64) / 2**64
    rng = np.random.default_rng(11)
    n = 4000
    hits = sum(_exact.LazyUniform(rng, T, 32).below_exp(x) for _ in range(n))
    assert abs(hits / n - frac) <= 5 * math.sqrt(frac * (1 - frac) / n)


@pytest.fixture(params=[32, 4], ids=["32-bit lanes", "4-bit lanes (flags everywhere)"])
def lane_bits(request, monkeypatch):
    # with 4 bits of u compared in numpy, about one lane in 8 is flagged and
    # settled by the exact Python comparison: the laws must not change
    monkeypatch.setattr(_exact, "_LANE_BITS", request.param)
    _exact.clear_plans()
    yield request.param
    monkeypatch.undo()
    _exact.clear_plans()


@pytest.mark.parametrize("scale", [0.7, 2.0, 6.0])
def test_vectorised_discrete_gaussian_matches_its_pmf(scale, lane_bits):
    L, s, K = _gaussian_parameters(scale)
    draws = discrete_gaussian_vec(np.random.default_rng(6), 20_000, L, s, K)
    s2 = 2 ** (L + K) / s
    assert _chi_square_p(draws, lambda k: -k**2 / (2 * s2), int(5 * math.sqrt(s2)) + 2) > 1e-3
    assert abs(draws.mean()) < 5 * math.sqrt(s2 / draws.size)


@pytest.mark.parametrize("L, s, K", [(2, 1, 0), (3, 2, 1), (5, 3, 1)])
def test_the_gaussian_is_exact_for_any_parameters(L, s, K):
    # (L, s, K) far from what _gaussian_parameters picks: the law is still
    # the discrete Gaussian of variance parameter 2^(L + K) / s
    draws = discrete_gaussian_vec(np.random.default_rng(13), 20_000, L, s, K)
    s2 = 2 ** (L + K) / s
    assert _chi_square_p(draws, lambda k: -k**2 / (2 * s2), int(5 * math.sqrt(s2)) + 2) > 1e-3


@pytest.mark.parametrize("L, s", [(2, 3), (0, 1), (5, 3)])
def test_vectorised_discrete_laplace_matches_its_pmf(L, s, lane_bits):
    draws = discrete_laplace_vec(np.random.default_rng(7), 20_000, L, s)
    scale = 2**L / s
    assert _chi_square_p(draws, lambda k: -np.abs(k) / scale, int(8 * scale) + 2) > 1e-3


@pytest.mark.parametrize("scale", [0.7, 30.0, 5e3, 3e6])
def test_discrete_noise_rounds_the_scale_up_by_less_than_a_part_in_4096(scale):
    L, s, K = _gaussian_parameters(scale)
    assert scale**2 <= 2 ** (L + K) / s < scale**2 * (1 + 2**-12)
    L, s = _laplace_parameters(scale)
    assert scale <= 2**L / s < scale * (1 + 2**-12)
    draws = discrete_noise(np.random.default_rng(8), 20_000, scale)
    assert draws.var() > scale**2 * (1 - 5 * math.sqrt(2 / draws.size))


def test_integer_parameters_equal_the_rational_formulas():
    # (L, s, K) and (L, s) are computed in integers; the definitions in Fractions
    def ceil_log2(q):
        e = 0
        while Fraction(2) ** e < q:
            e += 1
        while Fraction(2) ** (e - 1) >= q:
            e -= 1
        return e

    rng = random.Random(0)
    for scale in [0.25, 0.7, 1.0, 2.0, 6.0, 1024.0, 3e6, 2.0**22 * 0.99] + [
            math.exp(rng.uniform(-3, 30)) for _ in range(300)]:
        var = Fraction(scale) ** 2
        K = max(0, round(math.log2(scale)))
        L = max(0, ceil_log2(var / 2**K) + 12)
        assert _gaussian_parameters(scale) == (L, (2 ** (L + K) / var).__floor__(), K)
        L = max(0, ceil_log2(Fraction(scale)) + 12)
        assert _laplace_parameters(scale) == (L, (2**L / Fraction(scale)).__floor__())


def test_the_samplers_are_wrong_if_the_acceptance_is_wrong():
    # power: a rounded normal has the right variance but not the discrete
    # Gaussian's pmf at small sigma; the test above must reject it
    rng = np.random.default_rng(3)
    fake = np.rint(rng.normal(0.0, math.sqrt(0.6), 20_000))
    assert _chi_square_p(fake, lambda k: -k**2 / 1.2, 6) < 1e-3


def test_discrete_noise_is_reproducible_and_rounds_its_scale_up():
    a = discrete_noise(np.random.default_rng(4), 1000, 1e6)
    b = discrete_noise(np.random.default_rng(4), 1000, 1e6)
    assert np.array_equal(a, b) and np.all(a == np.rint(a))
    assert 0.9e6 < a.std() < 1.1e6


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_scales_beyond_the_vector_path_use_python_integers(noise):
    scale = _discrete._VECTOR_LIMIT[noise] * 2
    draws = discrete_noise(np.random.default_rng(14), 400, scale, noise)
    spread = draws.std() if noise == "gaussian" else np.abs(draws).mean()  # both = the scale
    assert np.all(draws == np.rint(draws)) and 0.8 < spread / scale < 1.2


def test_the_grid_is_a_fine_power_of_two():
    step = grid_step(2.5, 30)
    assert math.log2(step) == int(math.log2(step))
    assert 2.5 / (2048 * math.sqrt(30)) < step <= 2.5 / (1024 * math.sqrt(30))
    assert grid_sensitivity(2.5, 30, step) / (2.5 / step) < 1 + 2**-10 + 1e-8


@pytest.mark.parametrize("dim", [1, 5, 40])
def test_rounding_moves_neighbours_by_at_most_the_inflated_sensitivity(dim):
    rng = np.random.default_rng(dim)
    sens = 1.7
    step = grid_step(sens, dim)
    worst_l2 = worst_l1 = 0.0
    for _ in range(2000):
        v = rng.normal(size=dim) * 100
        u = rng.normal(size=dim)
        w = v + sens * u / np.linalg.norm(u)
        diff = quantise(v, step) - quantise(w, step)
        worst_l2 = max(worst_l2, np.linalg.norm(diff) / grid_sensitivity(sens, dim, step))
        worst_l1 = max(worst_l1, np.abs(diff).sum() / grid_sensitivity(sens, dim, step, "laplace"))
    assert worst_l2 <= 1.0 and worst_l1 <= 1.0
    assert worst_l2 > 0.9  # the bound is not slack by more than the rounding


def test_a_discrete_release_depends_on_the_value_only_through_its_grid_point():
    step = grid_step(1.0, 4)
    point = step * np.array([614.0, -2458.0, 10240.0, 4096.0])
    a = point + step * np.array([0.1, 0.2, -0.3, 0.0])
    b = point + step * np.array([-0.4, 0.45, 0.3, 0.25])  # same grid point, other low bits
    assert np.array_equal(quantise(a, step), quantise(b, step))

    def release(value, sampler):
        return perturb(value, sensitivity=1.0, multiplier=2.0, sampler=sampler,
                       rng=np.random.default_rng(5))

    out_a, out_b = release(a, "discrete"), release(b, "discrete")
    assert out_a.tobytes() == out_b.tobytes()  # bit for bit: nothing of the low bits survives
    assert np.all(out_a / step == np.rint(out_a / step))
    # the float path keeps the difference: x + noise reveals x's low bits
    assert release(a, "float").tobytes() != release(b, "float").tobytes()


# ----------------------------------------------------------------- accounting
@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (1.0, 1e-5), (8.0, 1e-3)])
def test_zcdp_calibration_matches_dp_accounting(eps, delta):
    m = calibrate_noise_multiplier(lambda m: noise_event(m, sampler="discrete"), eps, delta)
    spent, how = epsilon_spent(noise_event(m, sampler="discrete"), delta)
    assert how == "zcdp" and spent <= eps * (1 + 1e-9)
    assert spent == pytest.approx(eps, rel=1e-6)
    accountant = RdpAccountant()  # dp-accounting's own orders: a little looser
    accountant.compose(ZCDpEvent(0.5 / m**2))
    assert eps <= accountant.get_epsilon(delta) <= eps * 1.1
    # the discrete path needs more noise than the Gaussian-DP float path, not less
    m_float = calibrate_noise_multiplier(lambda m: noise_event(m, sampler="float"), eps, delta)
    assert 1.0 < m / m_float < 1.15


def test_a_discrete_tree_composes_its_levels_in_rho():
    event = tree_event(noise_multiplier=3.0, horizon=64, sampler="discrete")
    one = epsilon_spent(ZCDpEvent(7 * 0.5 / 9.0), 1e-5)[0]
    assert epsilon_spent(event, 1e-5) == (one, "zcdp")
    unbounded = tree_event(noise_multiplier=3.0, horizon=None, n_leaves=2**20, sampler="discrete")
    assert epsilon_spent(unbounded, 1e-5)[0] <= epsilon_spent(ZCDpEvent(0.5 / 9.0), 1e-5)[0]


# ----------------------------------------------------------------- the tree
def _tree(sampler="discrete", noise="gaussian", horizon=None):
    return PrivatePrefixSum(dim=3, sensitivity=2.0, noise_multiplier=1.5, horizon=horizon,
                            noise=noise, sampler=sampler, rng=np.random.default_rng(6))


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_a_discrete_tree_releases_grid_points_whatever_the_chunking(noise):
    leaves = np.random.default_rng(7).normal(size=(37, 3))
    one_by_one, batched = _tree(noise=noise), _tree(noise=noise)
    for leaf in leaves:
        one_by_one.add(leaf, 1)
    batched.add_leaves(leaves[:20])
    batched.add_leaves(leaves[20:])
    out = one_by_one.release()
    assert out.tobytes() == batched.release().tobytes()
    step = one_by_one._step
    assert np.all(out / step == np.rint(out / step))
    # a pre-summed chunk would be rounded once instead of per leaf: refused
    with pytest.raises(ValueError, match="add_leaves"):
        _tree(noise=noise).add(leaves[:5].sum(axis=0), 5)


def test_prefix_releases_are_the_successive_releases():
    leaves = np.random.default_rng(8).normal(size=(12, 3))
    stepwise, at_once = _tree(), _tree()
    expected = []
    for leaf in leaves:
        expected.append(stepwise.release() if stepwise.n_leaves else np.zeros(3))
        stepwise.add(leaf, 1)
    got = at_once.prefix_releases(leaves)
    np.testing.assert_array_equal(got[1:], np.array(expected)[1:])
    assert at_once.release().tobytes() == stepwise.release().tobytes()


def test_a_discrete_tree_has_the_float_trees_noise_level():
    # same multiplier: the discrete nodes carry sigma (1 + 2^-10) per coordinate
    # odd k: the only nodes a prefix sum reads (and the only ones drawn)
    draws = np.array([_tree(horizon=1)._draw_node(0, k) for k in range(1, 800, 2)])
    sigma = 2.0 * 1.5
    assert draws.std() * _tree(horizon=1)._step == pytest.approx(sigma, rel=0.05)


# ----------------------------------------------------------------- estimators
def _stream(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 2
    return X, X @ [1.0, -1.0, 0.5] + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("params", [
    dict(), dict(delta=0.0), dict(algorithm="ftrl", batch_size=32),
    dict(algorithm="mi-ogd", batch_size=8, alpha=1.0), dict(algorithm="igd"),
])
def test_estimators_on_the_discrete_path_spend_the_same_budget(params):
    X, y = _stream()
    spent = {}
    for sampler in ("float", "discrete"):
        est = PrivateOnlineRegressor(data_norm=3.0, y_bound=4.0, random_state=0,
                                     noise_sampler=sampler, **params)
        for chunk in np.array_split(np.arange(len(y)), 4):
            est.partial_fit(X[chunk], y[chunk])
        assert np.all(np.isfinite(est.coef_))
        spent[sampler] = est.privacy_spent_
    assert spent["discrete"].epsilon <= 1.0 + 1e-9
    if spent["float"].epsilon > 0.1:  # far below the budget the two conversions part ways
        assert spent["discrete"].epsilon == pytest.approx(spent["float"].epsilon, rel=0.02)
    expected = "pure" if params.get("delta") == 0 else "zcdp"
    assert spent["discrete"].accountant == expected


def test_a_discrete_fit_is_accurate_and_accounted():
    X, y = _stream(20_000)
    est = PrivateOnlineRegressor(data_norm=3.0, y_bound=4.0, random_state=0,
                                 noise_sampler="discrete").fit(X, y)
    assert est.privacy_spent_.accountant == "zcdp"
    assert est.privacy_spent_.epsilon <= 1.0 + 1e-9
    assert est.score(X, y) > 0.9
    clf = PrivateOnlineLogistic(data_norm=3.0, noise_sampler="discrete", random_state=0)
    clf.fit(X, (y > 0).astype(int), classes=[0, 1])
    assert clf.privacy_spent_.accountant == "zcdp" and clf.score(X, (y > 0).astype(int)) > 0.8


def test_the_discrete_sampler_survives_pickling_mid_stream():
    X, y = _stream()
    whole = PrivateOnlineLogistic(data_norm=3.0, batch_size=16, noise_sampler="discrete",
                                  random_state=0)
    labels = (y > 0).astype(int)
    whole.partial_fit(X[:900], labels[:900], classes=[0, 1])
    resumed = pickle.loads(pickle.dumps(whole))
    whole.partial_fit(X[900:], labels[900:])
    resumed.partial_fit(X[900:], labels[900:])
    assert whole.coef_.tobytes() == resumed.coef_.tobytes()


def test_an_unknown_sampler_is_refused_by_name():
    X, y = _stream(50)
    with pytest.raises(ValueError, match="noise_sampler"):
        PrivateOnlineRegressor(noise_sampler="exact").fit(X, y)
    with pytest.raises(ValueError, match="noise_sampler"):
        PrivatePrefixSum(dim=1, sensitivity=1.0, noise_multiplier=1.0, sampler="exact",
                         rng=np.random.default_rng(0))


@pytest.mark.parametrize("batch_size", [1, 3, 100])
def test_a_discrete_ftl_stream_ends_on_the_same_model_whatever_the_chunking(batch_size):
    # tree noise is keyed by node, so the model after n rows depends on the rows
    # only: any chunking (rounds straddling calls or not) must end on it bit for bit
    X, y = _stream(1200)

    def run(cuts):
        est = PrivateOnlineRegressor(data_norm=3.0, y_bound=4.0, batch_size=batch_size,
                                     noise_sampler="discrete", random_state=0)
        for a, b in zip(cuts[:-1], cuts[1:]):
            est.partial_fit(X[a:b], y[a:b])
        return est.coef_.tobytes()

    assert run([0, 1200]) == run([0, 7, 500, 501, 1200]) == run([0, 599, 600, 1100, 1200])


def test_a_value_huge_against_its_sensitivity_gets_a_coarser_exact_grid():
    value = np.array([3.0e9, -1.0, 0.5])
    out = perturb(value, sensitivity=1e-6, multiplier=1.0, sampler="discrete",
                  rng=np.random.default_rng(9))
    step = 2.0 ** (math.frexp(3.0e9)[1] - 50)
    assert np.all(out / step == np.rint(out / step))  # still exactly on a grid
    assert np.all(np.abs(out / step) < 2.0**52)
    # the noise follows the coarser grid's inflated sensitivity: about step sqrt(3) / 1e-6
    assert np.abs(out - value).max() < 100 * step * math.sqrt(3)


def test_a_discrete_tree_refuses_sums_beyond_exact_float_range():
    tree = _tree()
    before = tree.exact_total.copy()
    with pytest.raises(ValueError, match="2\\^52"):
        tree.add(np.array([1e30, 0.0, 0.0]), 1)
    assert np.array_equal(tree.exact_total, before) and tree.n_leaves == 0


def test_the_exp_table_built_by_powers_equals_the_direct_thresholds():
    table = _exact.exp_table(2**15, 16)
    ks = np.unique(np.r_[0, 1, 2**15 - 1, np.random.default_rng(2).integers(0, 2**15, 100)])
    direct = [_exact.floor_exp_neg(Fraction(int(k), 2**16), 31) - 2**15 for k in ks]
    assert np.array_equal(table[ks], direct)


def test_a_tie_with_a_huge_exponent_is_decided_without_summing_its_series():
    # exp(-10^9) has threshold 0 at any precision read so far: a uniform whose
    # first bits are all 0 ties, and must still be answered ("no") quickly
    u = _exact.LazyUniform(np.random.default_rng(0), 0, 32)
    assert u.below_exp(Fraction(10**9)) is False
    assert u.below_exp(Fraction(10**9, 3)) is False
