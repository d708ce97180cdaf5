"""The hardened noise path: exact discrete Gaussian and Laplace noise on a grid.

Why. A floating-point sampler cannot produce every double: ``x + noise``
lands on a set of values that depends on ``x``, so the low-order bits of a
release can reveal the input exactly (Mironov 2012, "On significance of the
least significant bits for differential privacy"). The fix used here is the
one of Canonne, Kamath & Steinke (2020, "The discrete Gaussian for
differential privacy"): move the value to a grid, add *integer* noise drawn
with exact integer arithmetic, and publish grid points only.

The release of a value v in R^d with replace-one L2 sensitivity Delta is

    gamma * (rint(v / gamma) + Z),   Z integer noise,

with grid step gamma = the largest power of two <= Delta / (1024 sqrt d)
(a power of two, so that ``q * gamma`` is exact). Every output is a
deterministic function of the integer vector rint(v / gamma) + Z, so nothing
of v survives but what the integer mechanism leaks.

Sensitivity after rounding. Each coordinate of rint moves by at most 1/2, so
for neighbours v, v'

    ||rint(v/gamma) - rint(v'/gamma)||_2 <= ||v - v'||_2 / gamma + sqrt(d)
    ||rint(v/gamma) - rint(v'/gamma)||_1 <= sqrt(d) ||v - v'||_2 / gamma + d.

The sensitivities used are therefore inflated: Delta' = Delta (1 + 1e-9) +
gamma sqrt(d) for the L2 bound (about Delta (1 + 2^-10)), and
Delta_1' = sqrt(d) Delta (1 + 1e-9) + gamma d for the L1 bound. The relative
1e-9 covers the floating-point error of computing v itself, which the exact
derivations of the sensitivities ignore.

Noise and cost, in units of the inflated sensitivity (the multiplier m is
the one the float path uses, so calibration does not change):

* ``noise="gaussian"``: independent discrete Gaussians N_Z(0, sigma^2) per
  coordinate, sigma = m Delta' / gamma. Canonne et al. (Thm. 14) prove
  this is (1 / (2 m^2))-zCDP for integer shifts of L2 norm <= Delta' / gamma:
  the same Renyi curve as the continuous Gaussian, but *not* its privacy
  loss distribution, so it is accounted with ``ZCDpEvent`` through
  dp-accounting's RDP accountant (slightly looser than the Gaussian-DP
  conversion the float path uses).
* ``noise="laplace"``: independent discrete Laplace per coordinate with
  scale m Delta_1' / gamma, epsilon = 1 / m for an L1 shift <= Delta_1' /
  gamma (the discrete Laplace density ratio is exp(|k| - |k + s|) / scale).
  It replaces the float path's L2-Laplace (which has no exact sampler);
  the noise norm is about sqrt(2) times larger for the same epsilon.

Samplers: exact, with no floating point in any decision. The default path
is vectorised (``discrete_noise``, drawn by ``_exact``): the laws are
P(k) proportional to exp(-q(|k|) / 2^P) with q(y) = s y^2 (Gaussian) or
s y (Laplace), so the scales are chosen with power-of-two denominators:
Gaussian variance sigma'^2 = 2^(L + K) / s, Laplace scale 2^L / s, rounded
*up* by less than 2^-12 relative (more noise than accounted, never less).
Every coordinate is proposed at once from a histogram envelope (16-bit box
slots, boxes of ~sigma / 16 integers, ~97% acceptance) and accepted by one
comparison of uniform bits (raw output of the numpy bit generator) with an
integer bound derived from exactly computed tables; the ~2^-16 of lanes
the bound cannot decide, and the ~2^-32 that start a tail proposal, are
finished in Python by reading more bits (``_exact`` derives each step).
About 20-50 nanoseconds per coordinate above a few thousand coordinates
(11-15 since ``_exact_squeeze``: 1.5 ms for a 2^17 + 1 BLT step, a third of
it the Philox words, level with the float path's ``standard_normal``; ~7
since the compiled pass, ``_exact_kernel``, ~4.4 on the BLT's SFC64 words, generated in it),
plus ~30-60 microseconds per call (and ~0.1 ms the first time a scale is
seen): 0.1-0.2 ms for the 4,277 coordinates of a 10,000 x 90
``partial_fit``, 5.5-8.5x (Gaussian) and 3.5-4.5x (Laplace) less than
Canonne et al.'s Algorithms 2-3 vectorised, measured side by side on 1,000
to 100,000 coordinates at scales 10^4 to 4 10^6. Scales beyond
``_VECTOR_LIMIT`` fall back to the scalar samplers below, which use Python
integers (``random.Random`` seeded with 256 bits of the Generator;
``randrange`` is exact rejection on raw bits) and Canonne et al.'s
Algorithms 1-3, 300-900x slower per coordinate on large draws.

The vectorised range. The estimators' Gaussian scale is sigma = m Delta' /
gamma in [1025, 2049) m sqrt(d) grid steps (``grid_step``), so it grows with
the width d and the multiplier m (small epsilon, deep trees, many noisy GD
steps): a tree stream on 2^17 columns at epsilon 1 asks for sigma ~
2^23.7, noisy GD on them 2^24-2^26 (docs/benchmarks/noise_scales.md).
The limit was 2^22, and such runs drew every coordinate in Python
(431 rows/s for that tree stream; 116x faster now, same run). The BLT
coarsens its grid to stay below 2^22 and never took the loop. ``_exact``
now serves every Gaussian scale up to 2^39 in int64 (its box brackets are
computed on the box index, and boxes of 2^22 integers or more, sigma past
2^26, split one product in two, ``_exact._split_bits``); the limit is 2^36
(m sqrt(d) up to ~2^25), where the noise stays below 2^40 grid steps,
far inside float64's exact integers. Scales below 2^22 draw exactly as
before (same plans, same words, same outputs). Laplace keeps 2^40 (|k|
< 2^46, so ``q + Z`` stays exact in float64; the estimators' scale
m 2^10 d (1..2) reaches it only at d = 2^17 with m > 2^12).
"""

import math
import random
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ._exact import make_plan, sample

SAMPLERS = ("float", "discrete")

_SLACK = 1e-9  # relative floating-point slack on every sensitivity
_GRID_BITS = 10  # grid step <= Delta / (2^10 sqrt d): Delta' = Delta (1 + ~1e-3)


def check_sampler(sampler):
    if sampler not in SAMPLERS:
        raise ValueError(f"noise_sampler must be one of {SAMPLERS}, got {sampler!r}.")


def grid_step(sensitivity, dim):
    """The grid of a release: a power of two <= sensitivity / (1024 sqrt(dim))."""
    target = float(sensitivity) / (2**_GRID_BITS * math.sqrt(max(int(dim), 1)))
    if not target > 0 or not math.isfinite(target):
        raise ValueError(f"the grid needs a positive finite sensitivity, got {sensitivity!r}.")
    return math.ldexp(1.0, math.floor(math.log2(target)))


def grid_sensitivity(sensitivity, dim, step, noise="gaussian"):
    """Sensitivity of ``rint(v / step)`` in grid units: L2 (Gaussian) or L1 (Laplace)."""
    d = max(int(dim), 1)
    if noise == "gaussian":
        return float(sensitivity) * (1 + _SLACK) / step + math.sqrt(d)
    return math.sqrt(d) * float(sensitivity) * (1 + _SLACK) / step + d


def quantise(value, step):
    """``rint(value / step)`` as float64 integers (exact below 2^53)."""
    return np.rint(np.asarray(value, dtype=np.float64) / step)


# ---------------------------------------------------------------- exact draws
# Rationals are passed as integer pairs (num, den): Fraction arithmetic would
# cost several times more in these loops. ``bits`` is a ``random.Random``
# seeded from the numpy Generator: its ``randrange`` is exact (rejection on
# raw bits) and ~5x cheaper per call than ``Generator.integers``.

def _bernoulli_exp_le1(bits, num, den):
    # Canonne et al. Algorithm 1: Bernoulli(exp(-num/den)) for num <= den
    k = 1
    while bits.randrange(den * k) < num:
        k += 1
    return k % 2 == 1


def bernoulli_exp(bits, num, den):
    """Bernoulli(exp(-num / den)) for integers num >= 0, den > 0, exactly."""
    whole, rest = divmod(num, den)
    for _ in range(whole):
        if not _bernoulli_exp_le1(bits, 1, 1):
            return False
    return _bernoulli_exp_le1(bits, rest, den)


def discrete_laplace(bits, t, s=1):
    """One draw with P(k) proportional to exp(-|k| s / t) (integers t, s > 0).

    Canonne et al. Algorithm 2.
    """
    while True:
        u = bits.randrange(t)
        if not bernoulli_exp(bits, u, t):
            continue
        v = 0
        while _bernoulli_exp_le1(bits, 1, 1):
            v += 1
        y = (u + t * v) // s
        negative = bits.getrandbits(1) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_gaussian(bits, num, den):
    """One draw with P(k) proportional to exp(-k^2 / (2 sigma^2)), sigma^2 = num / den.

    Canonne et al. Algorithm 3: discrete Laplace proposals of scale
    t = floor(sigma) + 1, accepted with probability
    exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2)) = exp(-(|y| t den - num)^2 / (2 num t^2 den)).
    """
    t = math.isqrt(num // den) + 1
    q = 2 * num * t * t * den
    while True:
        y = discrete_laplace(bits, t)
        if bernoulli_exp(bits, (abs(y) * t * den - num) ** 2, q):
            return y


def _up(x, bits=8):
    """Numerator over 2^bits of a rational >= x: noise is rounded up, never down."""
    return math.ceil(float(x) * 2**bits)


# ------------------------------------------------------- vectorised exact draws
# The laws are P(k) proportional to exp(-q(|k|) / 2^P) with an integer
# polynomial q, drawn by ``_exact`` (rejection from a histogram envelope,
# every acceptance an exact comparison of random bits with integer bounds).
# For that the scales are chosen with power-of-two denominators: Laplace
# scale 2^L / s, Gaussian variance 2^(L + K) / s.

_SCALE_BITS = 12  # s in [2^12, 2^13): scales rounded up by less than 2^-12 (relative)
# larger scales use Python integers. Gaussian: every int64 intermediate of
# ``_exact`` is checked when its plan is built (plans exist up to 2^39;
# beyond 2^25 through the split index, ``_exact._split_bits``); the
# estimators' sigma is ~ m 2^10 sqrt(d) grid steps, 2^20 at m = 3 and
# d = 10^5, 2^22.5 at m = 14 and d = 2^17. 2^36 keeps |k| below ~2^40
# (the tail needs 2^-32 per further 6.7 sigma). Laplace (scale ~ m 2^10 d
# for the L1 bound): |k| < 2^46.
_VECTOR_LIMIT = {"gaussian": 2.0**36, "laplace": 2.0**40}


def fast_scale_limit(noise="gaussian"):
    """Largest scale (grid units) the vectorised sampler serves; beyond it
    draws fall back to a Python loop, 300-900x slower per coordinate."""
    return _VECTOR_LIMIT[noise]


@lru_cache(maxsize=256)
def _laplace_parameters(scale):
    """(L, s) with 2^L / s >= scale, relative excess below 2^-12: with scale =
    num / den exactly, L = max(0, ceil(log2(scale)) + 12), s = floor(2^L / scale)."""
    num, den = Fraction(scale).as_integer_ratio()
    L = max(0, _ceil_log2(num, den) + _SCALE_BITS)
    return L, (den << L) // num


@lru_cache(maxsize=256)
def _gaussian_parameters(scale):
    """(L, s, K): sigma'^2 = 2^(L + K) / s >= scale^2 (relative excess below
    2^-12): K = round(log2(scale)), L = max(0, ceil(log2(scale^2 / 2^K)) + 12),
    s = floor(2^(L + K) / scale^2), in integers (scale = num / den exactly).
    (Canonne et al.'s proposal had scale 2^L / s and centre shift 2^K; the
    law only depends on sigma'^2.)"""
    num, den = Fraction(scale).as_integer_ratio()
    K = max(0, round(math.log2(float(scale))))
    L = max(0, _ceil_log2(num * num, (den * den) << K) + _SCALE_BITS)
    return L, ((den * den) << (L + K)) // (num * num), K


def _ceil_log2(p, q):
    """ceil(log2(p / q)) for positive integers, exactly: the least e with 2^e q >= p."""
    def covers(e):
        return (q << e) >= p if e >= 0 else q >= (p << -e)
    e = p.bit_length() - q.bit_length()
    while not covers(e):
        e += 1
    while covers(e - 1):
        e -= 1
    return e


def _python_draws(rng, n, draw, dtype):
    bits = random.Random(int.from_bytes(rng.bytes(32), "little"))
    return np.array([draw(bits) for _ in range(n)], dtype=dtype)


def discrete_laplace_vec(rng, n, L, s, dtype=np.int64):
    """``n`` draws with P(k) proportional to exp(-|k| s / 2^L): q(y) = s y, P = L."""
    plan = make_plan(0, s, L)
    if plan is None:  # an int64 intermediate could overflow: same law in Python integers
        return _python_draws(rng, n, lambda bits: discrete_laplace(bits, 2**L, s), dtype)
    return sample(rng, plan, n, dtype)


def discrete_gaussian_vec(rng, n, L, s, K, dtype=np.int64):
    """``n`` draws of the discrete Gaussian of variance parameter sigma'^2 =
    2^(L + K) / s: P(k) proportional to exp(-k^2 / (2 sigma'^2)) =
    exp(-s k^2 / 2^(L + K + 1)), so q(y) = s y^2 and P = L + K + 1."""
    plan = make_plan(s, 0, L + K + 1)
    if plan is None:
        return _python_draws(rng, n, lambda bits: discrete_gaussian(bits, 2 ** (L + K), s),
                             dtype)
    return sample(rng, plan, n, dtype)


def discrete_noise(rng, size, scale, noise="gaussian"):
    """``size`` independent integer draws (as float64) in grid units.

    ``scale`` is the Gaussian sigma or the Laplace scale, in grid units; it is
    rounded *up* (by less than 2^-12 relative; see ``_gaussian_parameters``
    and ``_laplace_parameters``): more noise than accounted, never less. The
    draws are a deterministic function of ``rng``'s state.
    """
    if not 0 < scale < _VECTOR_LIMIT[noise]:
        return _discrete_noise_scalar(rng, size, scale, noise)
    if noise == "gaussian":
        return discrete_gaussian_vec(rng, size, *_gaussian_parameters(scale), dtype=np.float64)
    return discrete_laplace_vec(rng, size, *_laplace_parameters(scale), dtype=np.float64)


def _discrete_noise_scalar(rng, size, scale, noise="gaussian"):
    """The Python-integer path (any scale): one draw per coordinate in a loop."""
    bits = random.Random(int.from_bytes(rng.bytes(32), "little"))
    if noise == "gaussian":
        num, den = _up(float(scale) ** 2), 2**8
        draws = [discrete_gaussian(bits, num, den) for _ in range(size)]
    else:
        t, s = _up(scale), 2**8
        draws = [discrete_laplace(bits, t, s) for _ in range(size)]
    return np.array(draws, dtype=np.float64)
