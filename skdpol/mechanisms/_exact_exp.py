"""Exact exp(-x) for the exact sampler (:mod:`._exact`): brackets and floors
of exp(-x) at a number of bits, in integer arithmetic, and the lazy uniform
compared against them."""

from fractions import Fraction
from functools import lru_cache

__all__ = ["LazyUniform", "exp_neg_bracket", "exp_neg_fixed", "floor_exp_neg", "floor_scaled_exp"]


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


def _exp_neg_small(f, pow2, bits):
    """(lo, hi) with lo <= 2^bits exp(-x) <= hi for x = f / 2^pow2 in [0, 1].

    Taylor terms t_k = 2^bits x^k / k! computed with floors, t'_k =
    floor(t'_{k-1} x / k), are low by at most k (the error is scaled by
    x / k <= 1 and grows by one floor per step); once t'_K = 0 the rest of
    the alternating, decreasing series is at most t_K <= K. So the partial
    sum is within K (K + 1) / 2 <= K^2 of 2^bits exp(-x)."""
    total = term = 1 << bits
    k = 0
    while term:
        k += 1
        term = term * f // (k << pow2)
        total += -term if k & 1 else term
    return total - k * k, total + k * k


@lru_cache(maxsize=64)
def _exp_neg_one(bits):
    return _exp_neg_small(1, 0, bits)


def exp_neg_fixed(num, pow2, bits):
    """(lo, hi) integers with lo <= 2^bits exp(-num / 2^pow2) <= hi, hi - lo <= 2,
    for integers num, pow2 >= 0: exp(-n) exp(-f) for the integer part n
    (powers of a bracket of exp(-1), floored below and ceiled above) and the
    fraction f, computed with 64 guard bits."""
    n = num >> pow2
    if n * 1442 > (bits + 2) * 1000:  # exp(-n) < 2^(-1.442 n) < 2^-(bits + 2)
        return 0, 1
    guard = bits + 64
    lo, hi = _exp_neg_small(num - (n << pow2), pow2, guard)
    if n:
        lo1, hi1 = _exp_neg_one(guard)
        for _ in range(n):
            lo, hi = (lo * lo1) >> guard, -((-hi * hi1) >> guard)
    return max(lo, 0) >> 64, -((-hi) >> 64)


def floor_scaled_exp(num, pow2, scale_num, scale_den, bits):
    """(F, exact): F = floor(2^bits v) for v = scale_num exp(-num / 2^pow2) / scale_den,
    and whether 2^bits v is an integer (possible only for num = 0: otherwise v
    is irrational)."""
    if num == 0:
        F, rest = divmod(scale_num << bits, scale_den)
        return F, rest == 0
    guard = bits + max(0, scale_num.bit_length() - scale_den.bit_length()) + 48
    while True:
        lo, hi = exp_neg_fixed(num, pow2, guard)
        a = (lo * scale_num) // (scale_den << (guard - bits))
        b = (hi * scale_num) // (scale_den << (guard - bits))
        if a == b:
            return a, False
        guard += 64


class LazyUniform:
    """A uniform u in [0, 1) known by its first ``bits`` bits ``prefix``; more
    bits are read from ``rng`` (64 at a time) only when a comparison needs
    them, and kept, so every comparison sees the same u."""

    def __init__(self, rng, prefix, bits):
        self.rng, self.prefix, self.bits = rng, int(prefix), int(bits)

    def below(self, floor_of):
        """[u < v], exactly, for the v with floor_of(bits) = (floor(2^bits v),
        whether 2^bits v is an integer). prefix < F: u < (prefix + 1) / 2^bits
        <= v; prefix > F: u >= (F + 1) / 2^bits > v; prefix = F = 2^bits v:
        u >= v. Otherwise read 64 more bits (v irrational: this ends)."""
        while True:
            F, exact = floor_of(self.bits)
            if self.prefix < F:
                return True
            if self.prefix > F or exact:
                return False
            self.prefix = (self.prefix << 64) | int(self.rng.bit_generator.random_raw())
            self.bits += 64

    def below_exp(self, x):
        """[u < exp(-x)] for a rational x >= 0."""
        x = Fraction(x)
        d = x.denominator
        if d & (d - 1):  # not dyadic: exact Fractions
            return self.below(lambda bits: _floor_exp_fraction(x, bits))
        return self.below(lambda bits: floor_scaled_exp(x.numerator, d.bit_length() - 1,
                                                        1, 1, bits))


def _floor_exp_fraction(x, bits):
    if x == 0:
        return 1 << bits, True
    # exp(-x) < 2^(-1.4426 x) (log2 e > 1.4426): below 2^-bits the floor is 0,
    # known without summing a series that, for a huge x, would never end
    if x * Fraction(14426, 10000) >= bits:
        return 0, False
    return floor_exp_neg(x, bits), False
