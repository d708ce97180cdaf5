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

Samplers: Algorithms 2-3 of Canonne et al., exact, with no floating point
in any decision. The default path is vectorised (``discrete_noise``): every
coordinate runs the same proposals at once on int64 arrays, and every
Bernoulli(exp(-x)) the algorithms need is one comparison of 32 uniform bits
(raw output of the numpy bit generator) with floor(2^32 exp(-x)) computed
exactly with rational arithmetic, ties (probability 2^-32) finished by
reading more bits (``_exact``). For that the scales are chosen with
power-of-two denominators: proposals of scale 2^L / s, Gaussian centre shift
2^K, so every exponent is N / 2^P. The Gaussian's variance is rounded *up*
to sigma'^2 = 2^(L + K) / s and the Laplace scale to 2^L / s, by less than
2^-12 relative (more noise than accounted, never less). About 0.25
microseconds per coordinate above a few thousand coordinates, plus ~0.2 ms
per call (``benchmarks/bench_noise.py``). Scales beyond ``_VECTOR_LIMIT``
(never reached by the estimators: sigma ~ m 2^10 sqrt(d)) fall back to the
scalar samplers below, which use Python integers (``random.Random`` seeded
with 256 bits of the Generator; ``randrange`` is exact rejection on raw
bits) and Canonne et al.'s Algorithm 1 for Bernoulli(exp(-x)).
"""

import math
import random
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ._exact import bernoulli_exp_dyadic, exp_floor as exact_floor

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
# Every proposal is built from exact Bernoulli(exp(-N / 2^P)) and floor(Exp(1))
# draws (``_exact``: one 32-bit comparison against an exactly computed
# threshold each). Scales are chosen so that every such exponent has a
# power-of-two denominator: the proposal's scale is 2^L / s for integers L, s,
# and the Gaussian's centre shift is a power of two 2^K.

_SCALE_BITS = 12  # s in [2^12, 2^13): scales rounded up by less than 2^-12 (relative)
_CHUNK = 2**16  # proposals per numpy pass (bounded temporaries)
_INT64_MAX = 2**63 - 1  # (a test lowers it to send proposals to the Python-integer branch)
# larger scales use Python integers. Gaussian: sigma < 2^22 keeps the exponent
# gap^2 s in int64 for gaps up to ~10 sigma (farther ones take the Python
# branch) and P = L + K + 1 < 60; the estimators' sigma is ~ m 2^10 sqrt(d)
# grid steps, 2^20 at m = 3 and d = 10^5. Laplace (scale ~ m 2^10 d for
# the L1 bound): X = 2^L V + u stays in int64 for L <= 53.
_VECTOR_LIMIT = {"gaussian": 2.0**22, "laplace": 2.0**40}


def fast_scale_limit(noise="gaussian"):
    """Largest scale (grid units) the vectorised sampler serves; beyond it
    draws fall back to a Python loop about 100x slower per coordinate."""
    return _VECTOR_LIMIT[noise]


def _fill(n, propose, rate):
    """``n`` i.i.d. accepted draws: ``propose(m)`` returns the accepted ones
    among m independent proposals; over-proposing and keeping the first
    accepted keeps them i.i.d. (acceptances are independent) with fewer
    numpy passes. ``rate`` is the expected acceptance (only the number of
    passes depends on it)."""
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        m = min(int((n - filled) / rate * 1.15) + 16, _CHUNK)
        y = propose(m)
        rate = max(y.size / m, 0.05)  # the next pass proposes for the observed rate
        y = y[: n - filled]
        out[filled:filled + y.size] = y
        filled += y.size
    return out


def _two_sided(rng, m, L, s):
    """The accepted ones among m proposals of Canonne et al.'s Algorithm 2 for
    P(y) proportional to exp(-|y| s / 2^L) (i.i.d., a random number of them).

    X = 2^L V + u with V = floor(Exp(1)) and u uniform on [0, 2^L) accepted
    with probability exp(-u / 2^L) has P(X = x) proportional to exp(-x / 2^L);
    floor(X / s) then has ratio exp(-s / 2^L); a random sign with the
    negative zero rejected makes it two-sided."""
    raw = rng.bit_generator.random_raw(m)
    u = (raw >> np.uint64(64 - L)).astype(np.int64) if L else np.zeros(m, dtype=np.int64)
    ok = bernoulli_exp_dyadic(rng, u, L)
    u, negative = u[ok], (raw[ok] & np.uint64(1)).astype(bool)  # the low bit: not among u's
    y = ((exact_floor(rng, u.size) << L) + u) // s
    keep = ~(negative & (y == 0))
    return np.where(negative, -y, y)[keep]


def _laplace_parameters(scale):
    """(L, s) with 2^L / s >= scale, relative excess below 2^-12."""
    scale = Fraction(scale)
    L = max(0, _ceil_log2(scale) + _SCALE_BITS)
    return L, (2**L / scale).__floor__()


@lru_cache(maxsize=256)
def _gaussian_parameters(scale):
    """(L, s, K): sigma'^2 = 2^(L + K) / s >= scale^2 (relative excess below
    2^-12), proposals of scale tau = 2^L / s, centre shift sigma'^2 / tau = 2^K."""
    var = Fraction(scale) ** 2
    K = max(0, round(math.log2(float(scale))))  # 2^K near sigma: tau within ~sqrt(2) of sigma
    L = max(0, _ceil_log2(var / 2**K) + _SCALE_BITS)
    return L, (Fraction(2 ** (L + K)) / var).__floor__(), K


def _ceil_log2(q):
    """ceil(log2(q)) for a positive Fraction, exactly."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    while Fraction(2) ** e < q:
        e += 1
    while Fraction(2) ** (e - 1) >= q:
        e -= 1
    return e


def discrete_laplace_vec(rng, n, L, s):
    """``n`` draws with P(k) proportional to exp(-|k| s / 2^L)."""
    return _fill(n, lambda m: _two_sided(rng, m, L, s), 0.6)


def discrete_gaussian_vec(rng, n, L, s, K):
    """``n`` draws of the discrete Gaussian of variance parameter 2^(L + K) / s
    (Canonne et al.'s Algorithm 3).

    Proposals y of scale tau = 2^L / s are accepted with probability
    exp(-(|y| - sigma^2 / tau)^2 / (2 sigma^2)) = exp(-(|y| - 2^K)^2 s / 2^(L + K + 1)),
    exact for any tau > 0 (tau near sigma only makes it fast).
    """
    P = L + K + 1
    wide_gap = math.isqrt(_INT64_MAX // s)  # beyond it gap^2 s would wrap in int64

    def propose(m):
        y = _two_sided(rng, m, L, s)
        gap = np.abs(y) - 2**K
        wide = np.abs(gap) >= wide_gap
        ok = np.empty(y.size, dtype=bool)
        ok[~wide] = bernoulli_exp_dyadic(rng, gap[~wide] ** 2 * s, P)
        if wide.any():  # far in the tail: Python integers, same law
            bits = random.Random(int.from_bytes(rng.bytes(32), "little"))
            ok[wide] = [bernoulli_exp(bits, int(g) ** 2 * s, 2**P) for g in gap[wide]]
        return y[ok]
    return _fill(n, propose, 0.4)  # ~0.63 (Laplace) x 0.6-0.75 (Gaussian)


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
        return discrete_gaussian_vec(rng, size, *_gaussian_parameters(scale)).astype(np.float64)
    return discrete_laplace_vec(rng, size, *_laplace_parameters(scale)).astype(np.float64)



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
