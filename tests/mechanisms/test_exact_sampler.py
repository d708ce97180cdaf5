"""The exact histogram-envelope sampler of mechanisms/_exact.py, component by component.

Each test can fail: exact arithmetic is checked against Decimal (an
independent implementation of exp), the plan's inequalities are re-derived,
the numpy decisions are confronted with exact ones on words crafted next to
each threshold, and the laws are tested with enough draws to see a 1% error
in a bucket's probability.
"""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import special, stats

from skdpol.mechanisms import _exact
from skdpol.mechanisms._discrete import (
    _gaussian_parameters,
    _laplace_parameters,
    discrete_gaussian_vec,
    discrete_laplace_vec,
)

@pytest.fixture(autouse=True)
def _precise_decimals():
    with localcontext() as context:
        context.prec = 100  # ~330 bits: every Decimal check here needs < 200
        yield


def _exp_neg(num, pow2):
    return (-Decimal(num) / Decimal(2) ** pow2).exp()


def _law(noise, scale):
    """(a, b, P) of the law discrete_noise draws at this scale."""
    if noise == "gaussian":
        L, s, K = _gaussian_parameters(scale)
        return s, 0, L + K + 1
    L, s = _laplace_parameters(scale)
    return 0, s, L


# ------------------------------------------------------------ exact exp(-x)
@pytest.mark.parametrize("bits", [32, 64, 130])
def test_fixed_point_exp_brackets_the_exact_value(bits):
    rng = np.random.default_rng(bits)
    cases = [(0, 0), (1, 0), (1, 60), (3, 2), (2**40 - 1, 40), (22, 0), (45, 1), (10**6, 3)]
    cases += [(int(n), int(p)) for n, p in zip(rng.integers(0, 2**50, 30), rng.integers(0, 50, 30))]
    for num, pow2 in cases:
        lo, hi = _exact.exp_neg_fixed(num, pow2, bits)
        exact = _exp_neg(num, pow2) * Decimal(2) ** bits
        assert lo <= exact <= hi and hi - lo <= 2, (num, pow2)


def test_scaled_floors_are_exact_and_flag_only_rational_values():
    rng = np.random.default_rng(3)
    for _ in range(200):
        num, pow2 = int(rng.integers(1, 2**40)), int(rng.integers(0, 45))
        snum, sden = int(rng.integers(1, 2**40)), int(rng.integers(1, 2**40))
        bits = int(rng.integers(1, 90))
        v = Decimal(snum) * _exp_neg(num, pow2) / Decimal(sden)
        if v > 2**20:
            continue
        F, exact = _exact.floor_scaled_exp(num, pow2, snum, sden, bits)
        assert F == int(v * Decimal(2) ** bits) and not exact
    assert _exact.floor_scaled_exp(0, 5, 3, 4, 2) == (3, True)  # 4 * 3/4: exactly 3
    assert _exact.floor_scaled_exp(0, 5, 1, 3, 4) == (5, False)  # 16/3


class _NoBits:
    """A generator stand-in that fails if a comparison reads more bits."""

    class bit_generator:
        @staticmethod
        def random_raw(*args):
            raise AssertionError("read more bits")


def test_a_uniform_equal_to_a_dyadic_prefix_is_above_it_without_more_bits():
    # v = 1/2 exactly: u's first bit 1 means u >= 1/2, decided at once
    u = _exact.LazyUniform(_NoBits, 1, 1)
    assert u.below(lambda bits: ((1 << bits) // 2, True)) is False
    # an irrational v tied with the prefix must read further
    u = _exact.LazyUniform(np.random.default_rng(0), 0, 1)
    assert u.below(lambda bits: _exact.floor_scaled_exp(1, 0, 1, 2, bits)) in (True, False)
    assert u.bits == 65


def test_a_tie_is_resolved_with_the_same_uniforms_later_bits():
    # u's first 32 bits equal floor(2^32 v): then u < v with probability
    # frac(2^32 v), which only reading u's later bits can produce
    v = _exp_neg(1, 2)  # exp(-1/4)
    T = int(v * 2**32)
    frac = float(v * 2**32 - T)
    rng = np.random.default_rng(11)
    n = 4000
    hits = sum(_exact.LazyUniform(rng, T, 32).below_exp(0.25) for _ in range(n))
    assert abs(hits / n - frac) <= 5 * math.sqrt(frac * (1 - frac) / n)


@pytest.mark.parametrize("bits", [16, 12])
def test_the_exp_table_is_the_exact_binary_expansion(bits):
    size = 3 << bits  # exp(-3) at the end: every entry above the 2^(31 - bits) offset
    table = _exact.exp_table(size, bits)
    rng = np.random.default_rng(bits)
    for i in np.unique(np.r_[0, 1, size - 1, rng.integers(0, size, 60)]):
        exact = int(_exp_neg(int(i), bits) * 2**31)
        assert table[i] == exact - 2 ** (31 - bits)
    # far out the entries stop at 0 (still a lower bound of 2^31 exp(-delta))
    assert _exact.exp_table(12 << 12, 12)[-1] == 0


@pytest.mark.parametrize("a, b, P, lw", [(5000, 0, 57, 15), (4099, 0, 40, 6), (3, 0, 2, 0),
                                         (0, 6000, 34, 17), (0, 5, 3, 0), (37, 11, 20, 2)])
def test_box_brackets_hold_the_exact_value_tightly(a, b, P, lw):
    # f(j w) = exp(-(a (j w)^2 + b j w) / 2^P) between lo and hi (times 2^-(31 + k))
    count = next(j for j in range(1, 10**6) if a * (j << lw) ** 2 + b * (j << lw) >= 40 << P)
    lo, hi, k = _exact._brackets(a, b, P, lw, count)  # x = q(j w) / 2^P up to 40
    for j in range(count):
        x = a * (j << lw) ** 2 + b * (j << lw)
        exact = _exp_neg(x, P) * Decimal(2) ** (31 + int(k[j]))
        low, high = int(lo[j]), int(hi[j])
        assert low <= exact <= high and high - low <= 16 and 2**28 <= low, j  # M T / 2^31 >= 2^30 / e


# ------------------------------------------------------------------ the plan
PLANS = [("gaussian", 0.7), ("gaussian", 6.0), ("gaussian", 1e4), ("gaussian", 4e6),
         ("laplace", 0.7), ("laplace", 6.0), ("laplace", 1e4), ("laplace", 1e9),
         # wide boxes (module notes): formerly refused, split index on one word,
         # on two words, the edge of the vectorised range
         ("gaussian", 2.0**23 * 1.3), ("gaussian", 2.0**27 * 1.1), ("gaussian", 2.0**33 * 1.7),
         ("gaussian", 2.0**36 * 0.999)]


@pytest.mark.parametrize("noise, scale", PLANS)
def test_the_envelope_dominates_the_law_and_its_bounds_hold(noise, scale):
    a, b, P = _law(noise, scale)
    plan = _exact.make_plan(a, b, P)
    w, B, C, S = 1 << plan.lw, plan.B, plan.C, _exact._SLOT_BITS
    a_ref, b_ref = _exact._reference(a), _exact._reference(b)
    gap = 2.0 ** (1 - _exact._REF_BITS)  # a shape serves laws within this of its reference
    assert 0 <= a - a_ref <= a * gap and 0 <= b - b_ref <= b * gap
    c = Decimal(C) / 2**_exact._C_BITS
    f = [_exp_neg(plan.q(j * w), P) for j in range(B + 1)]
    f_ref = [_exp_neg(a_ref * (j * w) ** 2 + b_ref * j * w, P) for j in range(B + 1)]
    n = [int(v) for v in plan.counts]
    for j in range(B):
        # n_j >= c f_ref(j w) >= c f(j w) (the envelope), about the ceiling (no waste)
        assert c * f[j] <= c * f_ref[j] <= n[j] < c * f_ref[j] + Decimal("1.001")
        # R_j <= 2^32 rho_j < R_j + r_slack, rho_j = c f(j w) / n_j (the law's own)
        rho, R = c * f[j] / n[j] * 2**32, int(plan.R[j])
        assert R <= rho < R + plan.r_slack
    assert plan.R[B] == plan.R[B + 1] == 0 and plan.r_slack < 100
    # the tail: f(B w) <= f_ref(B w) <= tau = 2^-32, B (about) the first such box
    tau = Decimal(plan.tail_num) / 2 ** (S + plan.Q)
    assert tau == Decimal(2) ** -32 and f[B] <= f_ref[B] <= tau < f_ref[B - 2]
    assert plan.tail_window <= plan.window  # every tail start is flagged
    # the slots: n_j of box j, the tail's, the rest reject
    counts = np.bincount(plan.slot_table, minlength=B + 2)
    assert list(counts[:B]) == n and counts[B] == _exact._TAIL_SLOTS
    assert counts.sum() == 2**S
    # every slot's delta index is inside the table
    dn_max = w * (a * (2 * (B + 1) * w + w) + b)
    top = dn_max >> plan.sh_index if plan.sh_index >= 0 else dn_max << -plan.sh_index
    assert top < plan.table.size and plan.sh_index == P - plan.table_bits
    # the window: 2^Q p < thr + window needs window >= 1 + slack / 2^(63 - Q)
    step = 2 ** (31 - plan.table_bits) + 1
    slack = step * 2**32 + plan.r_slack * (2**31 + step)
    assert plan.window >= 1 + slack / 2 ** (63 - plan.Q)
    if scale >= 16:  # every scale the estimators use: the finest table, flags ~2^-16
        assert plan.table_bits == 16 and plan.window < 2 ** (plan.Q - 15)
    if scale >= 1e4:
        assert plan.rate > 0.955  # the envelope wastes little


def test_laws_sharing_their_top_bits_share_a_shape_and_keep_their_own_rho():
    # sigma 10^6 and 10^6 (1 + 2^-11): one reference law, one slot table, two R's
    plans = [_exact.make_plan(*_law("gaussian", scale)) for scale in (1e6, 1e6 * (1 + 2**-11))]
    assert plans[0].a != plans[1].a
    assert np.array_equal(plans[0].slot_table, plans[1].slot_table)
    assert _exact._reference(plans[0].a) != plans[0].a  # a view, not the reference itself
    assert not np.array_equal(plans[0].R, plans[1].R)


def _crafted_words(plan, lanes, rng):
    """Words whose proposals are ``lanes`` = (box, offset, sign, U) rows."""
    S, lw, Q = _exact._SLOT_BITS, plan.lw, plan.Q
    first = np.searchsorted(plan.slot_table, np.arange(plan.B + 2))
    box, off, sign, U = (np.array(col, dtype=np.uint64) for col in zip(*lanes))
    words = first[box.astype(np.int64)].astype(np.uint64) | (off << S) | (sign << 63)
    # bits the decision must ignore: between the offset and U
    free = 63 - Q - S - lw
    if free > 0:
        words |= rng.integers(0, 2**free, box.size).astype(np.uint64) << (S + lw)
    extra = None
    if plan.two_words:
        halves = (U << (32 - Q)).astype(np.uint32)
        if halves.size % 2:
            halves = np.append(halves, np.uint32(0))
        extra = halves.view(np.uint64).copy()
    else:
        words |= U << (63 - Q)
    return words, extra


@pytest.mark.parametrize("noise, scale", PLANS)
def test_numpy_decisions_agree_with_exact_ones_next_to_every_threshold(noise, scale):
    # U = floor(2^Q p) + d: d < 0 means u < p for sure, d > 0 means u > p,
    # d = 0 is undecided at Q bits. numpy must never decide wrongly, must flag
    # d = 0, and may flag only within the window
    plan = _exact.make_plan(*_law(noise, scale))
    rng = np.random.default_rng(17)
    w, W, Q = 1 << plan.lw, plan.window, plan.Q
    lanes, expect = [], []
    for _ in range(150):
        j = int(rng.integers(0, plan.B))
        off, sign = int(rng.integers(0, w)), int(rng.integers(0, 2))
        absz = j * w + off + sign
        F, _ = _exact.floor_scaled_exp(plan.q(absz), plan.P, plan.C,
                                       int(plan.counts[j]) << _exact._C_BITS, Q)
        for d in (-W - 1, -W, -2, -1, 0, 1, 2, W - 1, W, W + 3):
            if 0 <= F + d < 2**Q:
                lanes.append((j, off, sign, F + d))
                expect.append(d)
    for j in np.unique(plan.slot_table[plan.slot_table >= plan.B]):  # tail and reject slots
        for U in (0, W - 1, W, 2**Q - 1):
            if U < 2**Q:
                lanes.append((j, 0, 0, U))
                expect.append(None)
    words, extra = _crafted_words(plan, lanes, rng)
    box, z, u63, accept, flagged = _exact.decide(plan, words, extra)
    assert flagged is not None and not np.any(accept & flagged)
    for (j, off, sign, u), d, acc, flag, zz in zip(lanes, expect, accept, flagged, z):
        if d is None:  # a tail slot is flagged iff U < window (tail starts: U < tail_window)
            assert not acc and flag == (u < W)
            continue
        assert zz == ((j * w + off) ^ -sign)
        if d < 0:
            assert acc or flag
        else:
            assert not acc
        if d == 0:
            assert flag
        if d <= -W:
            assert acc
        if d >= W:
            assert not flag


@pytest.mark.parametrize("noise, scale", [("gaussian", 40.0), ("laplace", 3e3)])
@pytest.mark.parametrize("hook", [dict(_FLAG_ALL=True), dict(_TABLE_BITS=0)],
                         ids=["every lane flagged", "a table too coarse to decide"])
def test_settling_every_lane_in_python_changes_no_draw(noise, scale, hook, hooks, monkeypatch):
    # with 1-step tables every A_i is 0: numpy accepts nothing and its window
    # (> 2^Q) flags every lane, through the plan rather than a test switch
    draw = discrete_gaussian_vec if noise == "gaussian" else discrete_laplace_vec
    params = _gaussian_parameters(scale) if noise == "gaussian" else _laplace_parameters(scale)
    ref = draw(np.random.default_rng(2), 3000, *params)
    settled = []
    real = _exact._settle
    monkeypatch.setattr(_exact, "_settle", lambda *args: settled.append(1) or real(*args))
    hooks(**hook)
    got = draw(np.random.default_rng(2), 3000, *params)
    assert np.array_equal(got, ref)  # every numpy decision was the exact one
    assert len(settled) > 3000


def test_plans_that_could_overflow_int64_are_refused_and_python_keeps_the_law(hooks):
    # every int64 intermediate of a plan (q at the reach, dn, |z|) is checked
    # against _INT64_MAX when the plan is built; lowered, the plan is refused
    L, s, K = _gaussian_parameters(3.0)
    assert _exact.make_plan(s, 0, L + K + 1) is not None
    hooks(_INT64_MAX=2**20)
    assert _exact.make_plan(s, 0, L + K + 1) is None
    draws = discrete_gaussian_vec(np.random.default_rng(9), 4000, L, s, K)
    s2 = 2 ** (L + K) / s
    ks = np.arange(-12, 13)
    p = np.exp(-ks**2 / (2 * s2))
    observed = np.array([(draws == k).sum() for k in ks])
    assert observed.sum() == draws.size
    keep = p * draws.size / p.sum() > 5
    expected = p[keep] * observed[keep].sum() / p[keep].sum()
    assert stats.chisquare(observed[keep], expected).pvalue > 1e-3


# ------------------------------------------------------------------- the laws
def _bucket_check(draws, half_sum, edges):
    """z-scores of the draws' counts in |k| buckets [edges[i], edges[i+1]) and in
    the sign, against the law's probabilities; half_sum(a, b) is the weight
    sum_{a <= k < b} f(k) (b = inf allowed), f(0) = 1."""
    weights = np.array([2 * half_sum(a, b) - (a == 0) for a, b in zip(edges[:-1], edges[1:])])
    total = 2 * half_sum(0, np.inf) - 1
    probs = weights / total
    counts = np.histogram(np.abs(draws), bins=np.append(edges[:-1], np.iinfo(np.int64).max))[0]
    n = draws.size
    z = (counts - n * probs) / np.sqrt(n * probs * (1 - probs))
    p_neg = (total - 1) / 2 / total
    z_sign = ((draws < 0).sum() - n * p_neg) / math.sqrt(n * p_neg * (1 - p_neg))
    return np.append(z, z_sign), probs


@pytest.mark.parametrize("noise, scale", [("gaussian", 1e4), ("gaussian", 3e6),
                                          ("laplace", 1e4), ("laplace", 2e6)])
def test_large_scale_laws_have_every_bucket_within_a_percent(noise, scale):
    # 4M draws in 8 buckets of >= 10% of the mass: a 1% relative error in any
    # bucket's probability moves its count by >= 6.6 standard deviations; we
    # allow 4
    n = 4_000_000
    if noise == "gaussian":
        L, s, K = _gaussian_parameters(scale)
        draws = discrete_gaussian_vec(np.random.default_rng(21), n, L, s, K)
        sd = math.sqrt(2 ** (L + K) / s)

        def half_sum(a, b):
            # midpoint rule: sum_{a <= k < b} exp(-k^2 / (2 sd^2)) is the
            # integral over [a - 1/2, b - 1/2] up to ~1 / (24 sd) relative
            c = sd * math.sqrt(2)
            hi = 0.0 if b == np.inf else special.erfc((b - 0.5) / c)
            return sd * math.sqrt(math.pi / 2) * (special.erfc((a - 0.5) / c) - hi)
    else:
        L, s = _laplace_parameters(scale)
        draws = discrete_laplace_vec(np.random.default_rng(22), n, L, s)
        x = s / 2**L  # f(k) = exp(-k x): geometric sums, exactly

        def half_sum(a, b):
            hi = 0.0 if b == np.inf else math.exp(-b * x)
            return (math.exp(-a * x) - hi) / -math.expm1(-x)
    quantiles = np.quantile(np.abs(draws[:200_000]), np.linspace(0, 1, 9)[1:-1])
    edges = np.r_[0, np.unique(quantiles.astype(np.int64)), np.inf]
    z, probs = _bucket_check(draws, half_sum, edges)
    assert probs.min() > 0.1 and abs(probs.sum() - 1) < 1e-9
    assert np.abs(z).max() < 4.0
    # power: a 1% error in any bucket's probability is >= 6.6 sd away
    assert (0.01 * np.sqrt(n * probs / (1 - probs))).min() > 6.6


def _chi_square(draws, log_weight, support):
    ks = np.arange(-support, support + 1)
    p = np.exp(log_weight(ks.astype(float)))
    wide = np.arange(-60 * support - 60, 60 * support + 61).astype(float)
    p /= np.exp(log_weight(wide)).sum()
    observed = np.append([(draws == k).sum() for k in ks], (np.abs(draws) > support).sum())
    expected = np.append(p, max(1 - p.sum(), 0.0)) * draws.size
    keep = expected > 5
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    return stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue


@pytest.mark.parametrize("noise, scale", [("gaussian", 1.5), ("gaussian", 9.0),
                                          ("laplace", 1.5), ("laplace", 9.0)])
def test_tails_and_python_settling_keep_the_law(noise, scale, hooks, monkeypatch):
    # two bits of u and a quarter of the slots for the tail: tau = 1/16, the
    # core ends near where f = 1/16, half the lanes are settled in Python and
    # ~1/16 start a tail (some of several levels)
    hooks(_LANE_BITS=2, _TAIL_SLOTS=2**14)
    tails = []
    real = _exact._tail
    monkeypatch.setattr(_exact, "_tail", lambda *args: tails.append(1) or real(*args))
    a, b, P = _law(noise, scale)
    plan = _exact.make_plan(a, b, P)
    assert plan.tail_num * 16 == 2 ** (_exact._SLOT_BITS + plan.Q)
    n = 30_000
    if noise == "gaussian":
        draws = discrete_gaussian_vec(np.random.default_rng(31), n, *_gaussian_parameters(scale))
        s2 = 2 ** (P - 1) / a
        p = _chi_square(draws, lambda k: -k**2 / (2 * s2), int(5 * math.sqrt(s2)) + 2)
    else:
        draws = discrete_laplace_vec(np.random.default_rng(31), n, *_laplace_parameters(scale))
        t = 2**P / b
        p = _chi_square(draws, lambda k: -np.abs(k) / t, int(8 * t) + 2)
    assert p > 1e-3
    # z >= B w only comes from tails (z = -(B w) is y = B w - 1 with sign 1)
    assert len(tails) > n / 40 and (draws >= plan.B << plan.lw).sum() > 100


def test_two_word_plans_read_u_from_a_second_word():
    # Laplace scales past 2^27: the offset needs more than 40 bits of the word
    L, s = _laplace_parameters(2.0**30)
    plan = _exact.make_plan(0, s, L)
    assert plan.two_words and plan.Q == 32
    draws = discrete_laplace_vec(np.random.default_rng(4), 200_000, L, s)
    t = 2**L / s
    # |k| is geometric: P(|k| >= x) = 2 exp(-x / t) / (1 + exp(-1 / t)) for x >= 1
    for x in (t / 4, t, 3 * t):
        expected = 2 * math.exp(-math.ceil(x) / t) / (1 + math.exp(-1 / t))
        got = (np.abs(draws) >= math.ceil(x)).mean()
        assert abs(got - expected) < 5 * math.sqrt(expected * (1 - expected) / draws.size)
    assert abs((draws < 0).mean() - 0.5) < 5 * math.sqrt(0.25 / draws.size)
