"""Exact Bernoulli(exp(-x)) draws, vectorised, by comparing random bits with
the binary expansion of exp(-x).

Why. The discrete samplers of ``_discrete`` need Bernoulli(exp(-x)) draws
for rational x; Canonne et al.'s Algorithm 1 makes them exactly but loops a
random number of times per draw, which costs ~2 microseconds per noise
coordinate even vectorised. Here a draw is one comparison instead.

How. A uniform u in [0, 1) is read as its first 32 bits U (one lane of a
raw 64-bit draw of the bit generator); a constant v in [0, 1] is read as
T = floor(2^32 v), computed *exactly* with rational arithmetic (``Fraction``
partial sums of the Taylor series, which bracket exp(-x) once its terms
decrease). Then

    U < T   implies   u < (U + 1) / 2^32 <= T / 2^32 <= v,
    U > T   implies   u >= U / 2^32 >= (T + 1) / 2^32 > v,

so [u < v] is decided exactly unless U == T (probability 2^-32 per
comparison). Such ties are resolved in Python by reading more bits of the
same u, 64 at a time, against more bits of v, until they differ (v is
irrational for every x > 0 used, and exactly 1 for x = 0, so this stops).
No floating-point value enters any decision.

exp(-N / 2^P) for an integer N splits as exp(-whole) times one factor per
16-bit group of the rest's bits worth 2^-32 or more, exp(-k 2^-m) with
k < 2^16, times one factor for all lower bits (whose threshold is always
2^32 - 1): each factor a table lookup and one comparison, all independent,
the product an AND. The tables are exact, built once per process (~0.1 s)
and shared by every scale.
"""

from fractions import Fraction
from functools import lru_cache

import numpy as np

_LANE_BITS = 32
_GROUP_BITS = 16
_WHOLE_TABLE = 24  # exp(-j) for j < 24; beyond, floor(2^32 exp(-j)) = 0
_FLOOR_TABLE = 12  # exp_floor reads the first 12 thresholds in numpy (P(V >= 12) = 6e-6)


def exp_neg_bracket(x, bits):
    """(lo, hi) Fractions with lo <= exp(-x) <= hi and hi - lo <= 2^-bits, x >= 0 rational.

    Partial sums S_k of sum_j (-x)^j / j! alternate around the limit once
    the terms shrink (j > x), so two consecutive sums bracket exp(-x)."""
    x = Fraction(x)
    if x == 0:
        return Fraction(1), Fraction(1)
    eps = Fraction(1, 2**bits)
    total, term, k = Fraction(1), Fraction(1), 0
    while True:
        k += 1
        term = term * -x / k
        nxt = total + term
        if k > x and abs(term) <= eps:
            return min(total, nxt), max(total, nxt)
        total = nxt


@lru_cache(maxsize=4096)
def floor_exp_neg(x, bits):
    """floor(2^bits exp(-x)) exactly (more terms until the bracket's floors agree)."""
    extra = 16
    while True:
        lo, hi = exp_neg_bracket(x, bits + extra)
        a, b = (lo * 2**bits).__floor__(), (hi * 2**bits).__floor__()
        if a == b:
            return a
        extra += 32


class LazyUniform:
    """A uniform u in [0, 1) known by its first ``bits`` bits ``prefix``; more
    bits are read from ``rng`` (64 at a time) only when a comparison needs
    them, and kept, so every comparison sees the same u."""

    def __init__(self, rng, prefix):
        self.rng, self.prefix, self.bits = rng, int(prefix), _LANE_BITS

    def less(self, x):
        """[u < exp(-x)], exactly."""
        x = Fraction(x)
        while True:
            # exp(-x) < 2^(-1.4426 x) (log2 e > 1.4426): when that is below
            # 2^-bits the target is 0, known without summing a series that, for
            # a huge x, would never end
            if x * Fraction(14426, 10000) >= self.bits:
                target = 0
            else:
                target = floor_exp_neg(x, self.bits)
            if self.prefix < target:
                return True
            if self.prefix > target:
                return False
            self.prefix = (self.prefix << 64) | int(self.rng.bit_generator.random_raw())
            self.bits += 64


def refine_less(rng, prefix, x):
    """[u < exp(-x)] for the uniform u whose first ``_LANE_BITS`` bits are
    ``prefix`` (tied with exp(-x) at that precision)."""
    return LazyUniform(rng, prefix).less(x)


def lanes(rng, n):
    """``n`` uniform integers of ``_LANE_BITS`` bits (uint32): halves of raw
    64-bit draws (fewer bits only in tests, to make ties common)."""
    raw = rng.bit_generator.random_raw((int(n) + 1) // 2)
    u = raw.view(np.uint32)[: int(n)]
    return u if _LANE_BITS == 32 else u >> np.uint32(32 - _LANE_BITS)


def clear_tables():
    """Forget the cached thresholds (after changing ``_LANE_BITS``)."""
    for cached in (_group_table, _whole_table, _floor_thresholds):
        cached.cache_clear()


def _table(values):
    """uint32 thresholds floor(2^32 exp(-x)) for the exponents ``values``. x = 0
    (exp(-x) = 1, threshold 2^32) is stored as 2^32 - 1: U < T still decides
    "below" and the tie U = 2^32 - 1 refines to "below" too, so it stays exact."""
    top = 2**_LANE_BITS - 1
    return np.array([min(floor_exp_neg(Fraction(x), _LANE_BITS), top) for x in values],
                    dtype=np.uint32)


@lru_cache(maxsize=None)
def _group_table(m, width):
    """Thresholds of exp(-k 2^-m) for k < 2^width (width <= _GROUP_BITS).

    Fast and still exact: integer brackets lo_k <= 2^W exp(-k 2^-m) <= hi_k
    grow by powers (lo_{k+1} = floor(lo_k lo_1 / 2^W), hi rounded up), and a
    threshold is taken only where both ends give the same floor at 32 bits;
    elsewhere (about 2^16 2^-90 of the time) it is computed directly."""
    W = 128
    lo1, hi1 = exp_neg_bracket(Fraction(1, 2**m), W + 8)
    lo1, hi1 = (lo1 * 2**W).__floor__(), -((-hi1 * 2**W).__floor__())
    lo, hi, out = 2**W, 2**W, []
    top = 2**_LANE_BITS - 1
    for k in range(2**width):
        a, b = lo >> (W - _LANE_BITS), hi >> (W - _LANE_BITS)
        exact = a if a == b else floor_exp_neg(Fraction(k, 2**m), _LANE_BITS)
        out.append(min(exact, top))
        lo, hi = (lo * lo1) >> W, -((-hi * hi1) >> W)
    return np.array(out, dtype=np.uint32)


@lru_cache(maxsize=None)
def _whole_table():
    return _table(range(_WHOLE_TABLE))


def _below(rng, u, table, exponents):
    """[u_i < exp(-x_i)] with T_i = table entries already gathered; ties resolved
    exactly with x_i = exponents(i) (a callable, only called on ties)."""
    out = u < table
    tie = u == table
    if tie.any():
        for i in np.flatnonzero(tie):
            out[i] = refine_less(rng, int(u[i]), exponents(i))
    return out


def bernoulli_exp_dyadic(rng, N, P):
    """Bernoulli(exp(-N_i / 2^P)) for an int64 array N >= 0 and an int P >= 0, exactly.

    exp(-N / 2^P) = exp(-whole) prod_g exp(-k_g 2^-m_g) exp(-low): one
    independent comparison per factor, accepted when all are. ``low`` (the
    bits of N / 2^P below 2^-32) is below 2^-32, where every threshold is
    2^32 - 1, so those bits share one comparison whatever they are."""
    N = np.asarray(N, dtype=np.int64)
    n = N.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    ok = np.ones(n, dtype=bool)
    whole = N >> P
    if whole.any():
        T = _whole_table()[np.minimum(whole, _WHOLE_TABLE - 1)]
        T[whole >= _WHOLE_TABLE] = 0  # exp(-j) < 2^-32 there: a tie at U = 0 is refined
        ok &= _below(rng, lanes(rng, n), T, lambda i: int(whole[i]))
    rest = N & ((1 << P) - 1)
    top = min(P, _LANE_BITS)  # bits of rest worth 2^-32 or more
    for g in range(-(-top // _GROUP_BITS)):
        m = min(_GROUP_BITS * (g + 1), top)  # the group's bits are k 2^-m
        k = (rest >> (P - m)) & ((1 << (m - _GROUP_BITS * g)) - 1)
        ok &= _below(rng, lanes(rng, n), _group_table(m, m - _GROUP_BITS * g)[k],
                     lambda i: Fraction(int(k[i]), 2**m))
    if P > top:
        # r = low / 2^P < 2^-b (b = _LANE_BITS): exp(-r) > 1 - r > 1 - 2^-b, so
        # the threshold is 2^b - 1 whatever low is (exp(0) = 1 is stored so too)
        low = rest & ((1 << (P - top)) - 1)
        ok &= _below(rng, lanes(rng, n), np.uint32(2**_LANE_BITS - 1),
                     lambda i: Fraction(int(low[i]), 2**P))
    return ok


@lru_cache(maxsize=None)
def _floor_thresholds():
    return _table(range(1, _FLOOR_TABLE + 1))


def exp_floor(rng, n):
    """``n`` draws of floor(E), E ~ Exp(1): P(V >= j) = exp(-j), from one uniform
    each (V = #{j >= 1: u < exp(-j)}). Draws reaching the table's end
    (probability e^-12) or tied with a threshold are finished in Python."""
    u = lanes(rng, n)
    T = _floor_thresholds()
    # thresholds decrease, so v counts those above u; the first 3 cover all
    # but e^-3 of the draws, the rest is counted on those only
    v = np.zeros(u.size, dtype=np.int64)
    for t in T[:3]:
        v += u < t
    far = np.flatnonzero(v == min(3, T.size))
    if far.size and T.size > 3:
        v[far] += np.searchsorted(-T[3:].astype(np.int64), -u[far].astype(np.int64), "left")
    # u = T_j implies v = j - 1: a tie can only be with threshold v (0-based)
    slow = (u == T[np.minimum(v, T.size - 1)]) | (v == T.size)
    if slow.any():
        for i in np.flatnonzero(slow):
            ui, j = LazyUniform(rng, u[i]), 0
            while ui.less(j + 1):
                j += 1
            v[i] = j
    return v
