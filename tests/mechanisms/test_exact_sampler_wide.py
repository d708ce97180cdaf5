"""The exact sampler past 2^22: wide boxes (mechanisms/_exact.py, "Wide boxes").

The vectorised discrete Gaussian now serves scales up to 2^36 grid steps
(main stopped at 2^22 and drew wider laws in a Python loop). Each test can
fail: the split index is compared with the exact integer floor, the plan's
inequalities are re-derived with Decimal (``test_exact_sampler``'s checks,
run at the new scales), the laws are tested with enough draws to refute a
sigma 5% off, and the draws below 2^22 are pinned to main's.
"""

import math

import numpy as np
import pytest
from scipy import special, stats

from skdpol.mechanisms import PrivatePrefixSum, _discrete, _exact
from skdpol.mechanisms._discrete import _gaussian_parameters, discrete_noise

# formerly refused (q at the reach passed 2^63), one-word split, two-word split,
# the edge of the range (also in test_exact_sampler's PLANS: the envelope's
# bounds and the numpy decisions against exact ones next to every threshold)
WIDE = [2.0**23 * 1.3, 2.0**27 * 1.1, 2.0**33 * 1.7, 2.0**36 * 0.999]


def _plan(scale):
    L, s, K = _gaussian_parameters(scale)
    return _exact.make_plan(s, 0, L + K + 1)


@pytest.mark.parametrize("scale", WIDE + [2.0**25 * 1.9, 2.0**26 * 1.01])
def test_the_split_index_is_the_exact_floor(scale):
    # every slot's extreme lanes (e = 0, 1, w - 1, w; the reject box B + 1 included)
    # and random ones, against floor(dn / 2^sh) in Python integers
    plan = _plan(scale)
    w = 1 << plan.lw
    rng = np.random.default_rng(int(math.log2(scale) * 100))
    j = np.r_[np.repeat(np.arange(plan.B + 2), 4), rng.integers(0, plan.B + 2, 4000)]
    e = np.r_[np.tile([0, 1, w - 1, w], plan.B + 2), rng.integers(0, w + 1, 4000)]
    got = _exact.table_index(plan, (j << plan.lw).astype(np.int64), e.astype(np.int64))
    for jj, ee, g in zip(j.tolist(), e.tolist(), got.tolist()):
        dn = ee * (plan.a * (2 * (jj << plan.lw) + ee) + plan.b)
        assert g == dn >> plan.sh_index
    assert (plan.split is None) == (scale < 2.0**26)  # dn itself fits below 2^26
    assert got.max() < plan.table.size  # no lane reads past the table


def test_plans_cover_the_range_and_the_sampler_draws_it_vectorised():
    for e in np.linspace(22, 36, 57):
        assert _plan(2.0**e * 0.999) is not None, e
    assert _discrete.fast_scale_limit("gaussian") == 2.0**36
    assert _plan(2.0**40) is None  # beyond: the split's t_hi e could pass 2^63


def test_a_split_that_could_overflow_is_refused_and_python_keeps_the_law(hooks, monkeypatch):
    # sigma = 2^34 (lw = 30): t_max < 2^50, t_hi e < 2^48. With int64
    # lowered to 2^47 the split refuses (and only the split: the box
    # brackets' N stays ~2^26); discrete_gaussian_vec then draws the same law
    # with Python integers
    L, s, K = _gaussian_parameters(2.0**34)
    assert _exact.make_plan(s, 0, L + K + 1).split is not None
    refused = []
    real = _exact._split_bits
    monkeypatch.setattr(_exact, "_split_bits", lambda *a: refused.append(real(*a)) or real(*a))
    hooks(_INT64_MAX=2**47)
    assert _exact.make_plan(s, 0, L + K + 1) is None and refused == [None]
    draws = _discrete.discrete_gaussian_vec(np.random.default_rng(3), 3000, L, s, K)
    assert abs(draws.std() / 2.0**34 - 1) < 0.06 and np.all(draws == np.rint(draws))


def test_draws_below_2_22_are_mains():
    # the first draws at main (36bd06f) for these scales and seeds
    main = {3.0: [4, -2, 5, 6, -1, 2],
            1e4: [12864, -5389, 17488, 19017, -2761, 7225],
            3e6: [3809856, -1480461, 5289552, 5864521, -878281, 2329657],
            4.19e6: [5382720, -2135821, 7386704, 8092745, -1140425, 3116089]}
    for scale, draws in main.items():
        assert discrete_noise(np.random.default_rng(11), 6, scale).tolist() == draws
    assert discrete_noise(np.random.default_rng(11), 6, 1e9, "laplace").tolist() == [
        646630413, -534681357, 2679158352, 3051322441, -248735433, 792169529]


def _bucket_pvalue(draws, sigma, n_buckets=40):
    """Chi-square p-value of |draws| in ``n_buckets`` buckets of equal mass under
    the discrete Gaussian of parameter ``sigma`` (midpoint rule: exact to
    ~1 / (24 sigma) relative, nothing at these scales), and the sign."""
    c = sigma * math.sqrt(2)
    # P(|k| >= x) for integer x >= 1 is erfc((x - 1/2) / c) up to ~1/sigma^2
    edges = np.unique(np.rint(c * special.erfcinv(np.linspace(1, 0, n_buckets + 1)[1:-1])
                              + 0.5).astype(np.int64))
    tail = special.erfc((edges - 0.5) / c)
    probs = -np.diff(np.r_[1.0, tail, 0.0])
    counts = np.bincount(np.searchsorted(edges, np.abs(draws), side="right"),
                         minlength=probs.size)
    return stats.chisquare(counts, probs * draws.size).pvalue


@pytest.mark.parametrize("scale", WIDE)
def test_wide_laws_match_the_discrete_gaussian_and_refute_a_sigma_5_percent_off(scale):
    # 400,000 draws in 40 equal-mass buckets: a sigma 5% off moves the outer
    # buckets by ~8% of their mass, a chi-square of ~10^3 on 39 degrees; the
    # right law must pass (p > 1e-4) and the wrong one must be refuted
    L, s, K = _gaussian_parameters(scale)
    sigma = math.sqrt(2 ** (L + K) / s)  # the law drawn (scale rounded up by < 2^-12)
    draws = discrete_noise(np.random.default_rng(41), 400_000, scale)
    assert _bucket_pvalue(draws, sigma) > 1e-4
    assert _bucket_pvalue(draws, sigma * 1.05) < 1e-12
    assert _bucket_pvalue(draws, sigma / 1.05) < 1e-12
    wrong = discrete_noise(np.random.default_rng(42), 400_000, scale / 1.05)  # (in range)
    assert _bucket_pvalue(wrong, sigma) < 1e-12
    # symmetric: the sign is a fair coin (k and -k are equally likely)
    assert stats.binomtest(int((draws < 0).sum()), int((draws != 0).sum())).pvalue > 1e-4


def test_a_wide_tree_draws_on_the_vectorised_path(monkeypatch):
    # the case: 2^17 + 1 coordinates at multiplier 14 (epsilon ~1),
    # sigma ~2^22.6 grid steps, once drawn one coordinate at a time in Python
    def refuse(*args, **kwargs):
        raise AssertionError("the Python loop was taken")

    monkeypatch.setattr(_discrete, "_discrete_noise_scalar", refuse)
    dim = 2**17 + 1
    tree = PrivatePrefixSum(dim=dim, sensitivity=2.0, noise_multiplier=14.0, horizon=64,
                            rng=np.random.default_rng(0))
    assert tree._grid_scale(0) > 2.0**22
    tree.add_leaves(np.zeros((3, dim)))
    release = tree.release()
    z = release / tree._step
    assert np.all(z == np.rint(z))  # grid points
    # the release's noise has the tree's std (the leaves are zero)
    assert abs(release.std() / tree.noise_std_at(3)[0] - 1) < 0.02


@pytest.mark.parametrize("scale", [2.0**27 * 1.1, 2.0**33 * 1.7])
def test_wide_tails_and_python_settling_keep_the_law(scale, hooks, monkeypatch):
    # two bits of u and a quarter of the slots for the tail (as in
    # test_exact_sampler at small scales): tau = 1/16, half the lanes are
    # settled in Python with the wide law's integers and ~1/16 start a tail
    hooks(_LANE_BITS=2, _TAIL_SLOTS=2**14)
    tails = []
    real = _exact._tail
    monkeypatch.setattr(_exact, "_tail", lambda *args: tails.append(1) or real(*args))
    plan = _plan(scale)
    assert plan.split is not None and plan.tail_num * 16 == 2 ** (_exact._SLOT_BITS + plan.Q)
    L, s, K = _gaussian_parameters(scale)
    sigma = math.sqrt(2 ** (L + K) / s)
    draws = _discrete.discrete_gaussian_vec(np.random.default_rng(5), 40_000, L, s, K)
    assert _bucket_pvalue(draws, sigma, n_buckets=20) > 1e-4
    assert _bucket_pvalue(draws, sigma * 1.05, n_buckets=20) < 1e-4
    # |z| >= B w only comes from tails
    assert len(tails) > 40_000 / 40 and (np.abs(draws) > plan.B << plan.lw).sum() > 100
