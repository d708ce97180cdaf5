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

Samplers: Algorithms 1-3 of Canonne et al., exact, with integers only and
no floating point. The default path is vectorised (``discrete_noise``): every
coordinate runs the same rejection loops at once on int64 arrays, with
uniform integers from ``numpy.random.Generator.integers`` (exact: Lemire's
rejection on raw bits), masked to the coordinates still looping, so the
cost is a few numpy passes per release instead of a Python loop per
coordinate. To keep every product inside int64, the Gaussian's variance is
rounded *up* to sigma'^2 = t c with t = floor(sigma) + 1 and c an integer
(sigma'^2 - sigma^2 < t, a relative excess below 1 / sigma: more noise than
accounted, never less); then Algorithm 3's acceptance exponent is
(|y| - c)^2 / (2 t c), integers of about 40 bits at most for the scales
used. Scales beyond ``_VECTOR_LIMIT`` (never reached by the estimators:
sigma ~ m 2^10 sqrt(d)) fall back to the scalar samplers below, which use
Python integers (``random.Random`` seeded with 256 bits of the Generator;
``randrange`` is exact rejection on raw bits).
"""

import math
import random

import numpy as np

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
# Each function runs one of Canonne et al.'s loops on all coordinates at
# once: ``active`` holds the coordinates still looping, and each pass draws
# one exact uniform integer for each of them. Inputs are int64 arrays whose
# products stay below 2^62 (checked by the caller through _VECTOR_LIMIT).

_VECTOR_LIMIT = 2**40  # largest t c (Gaussian) or t (Laplace) on the int64 path
_WIDE_GAP = 2**31  # a Gaussian proposal this far from c is accepted with Python ints


def _bernoulli_exp_le1_vec(rng, num, den):
    """Bernoulli(exp(-num/den)) for an int64 array 0 <= num <= den, den an int
    (Algorithm 1). Every coordinate still looping is at the same k, so each
    pass draws with one scalar bound den k."""
    num = np.asarray(num, dtype=np.int64)
    out = np.empty(num.shape, dtype=bool)
    active = np.arange(num.size)
    k = 1
    while active.size:
        go_on = rng.integers(0, den * k, size=active.size) < num[active]
        out[active[~go_on]] = k % 2 == 1
        active = active[go_on]
        k += 1
    return out


def _bernoulli_exp1_vec(rng, n):
    """n draws of Bernoulli(exp(-1)): Algorithm 1 with num = den = 1, whose
    first comparison (a draw below 1 is always 0 < 1) is skipped."""
    out = np.empty(n, dtype=bool)
    active = np.arange(n)
    k = 2
    while active.size:
        go_on = rng.integers(0, k, size=active.size) < 1
        out[active[~go_on]] = k % 2 == 1
        active = active[go_on]
        k += 1
    return out


def _geometric_exp1_vec(rng, n, width=2):
    """Per coordinate, the number of successes before the first failure of
    i.i.d. Bernoulli(exp(-1)) draws: P(v >= j) = exp(-j). Draws ``width``
    Bernoullis per coordinate per pass (all succeed with probability
    exp(-width)), so a few passes cover every coordinate."""
    v = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        b = _bernoulli_exp1_vec(rng, active.size * width).reshape(active.size, width)
        every = b.all(axis=1)
        v[active] += np.where(every, width, np.argmin(b, axis=1))
        active = active[every]
    return v


def bernoulli_exp_vec(rng, num, den):
    """Bernoulli(exp(-num / den)) for an int64 array num >= 0 and an int den > 0,
    exactly.

    exp(-num/den) = exp(-1)^whole exp(-rest/den): the first factor is the
    event that ``whole`` Bernoulli(exp(-1)) draws all succeed, i.e. that a
    geometric count of successes reaches ``whole``.
    """
    num = np.asarray(num, dtype=np.int64)
    den = int(den)
    whole, rest = np.divmod(num, den)
    alive = np.ones(num.shape, dtype=bool)
    some = np.flatnonzero(whole > 0)
    if some.size:
        alive[some] = _geometric_exp1_vec(rng, some.size) >= whole[some]
    idx = np.flatnonzero(alive)
    alive[idx] = _bernoulli_exp_le1_vec(rng, rest[idx], den)
    return alive


def _fill(n, propose):
    """``n`` i.i.d. accepted draws: ``propose(m)`` returns m candidates and
    their acceptance; over-proposing and keeping the first accepted keeps
    them i.i.d. (acceptances are independent) with fewer numpy passes."""
    out = np.empty(n, dtype=np.int64)
    filled, rate = 0, 0.5
    while filled < n:
        m = int((n - filled) / rate * 1.1) + 8
        y, ok = propose(m)
        rate = max(ok.mean(), 0.05)  # the next pass proposes for the observed rate
        y = y[ok][: n - filled]
        out[filled:filled + y.size] = y
        filled += y.size
    return out


def discrete_laplace_vec(rng, n, t, s=1):
    """``n`` draws with P(k) proportional to exp(-|k| s / t) (Algorithm 2)."""
    def propose(m):
        u = rng.integers(0, t, size=m)
        ok = bernoulli_exp_vec(rng, u, t)
        y = (u + t * _geometric_exp1_vec(rng, m)) // s
        negative = rng.integers(0, 2, size=m) == 1
        return np.where(negative, -y, y), ok & ~(negative & (y == 0))
    return _fill(n, propose)


def discrete_gaussian_vec(rng, n, t, c):
    """``n`` draws of the discrete Gaussian of variance parameter t c (Algorithm 3).

    Proposals are discrete Laplace of scale t, accepted with probability
    exp(-(|y| - c)^2 / (2 t c)) = exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2))
    for sigma^2 = t c: exact for any t > 0 (t = floor(sigma) + 1 only makes
    it fast).
    """
    def propose(m):
        y = discrete_laplace_vec(rng, m, t)
        gap = np.abs(y) - c
        # (|y| - c)^2 must not wrap in int64: a proposal 2^31 away from c (for
        # the scales used, an event of probability ~exp(-2^10) or less) gets
        # its acceptance with Python integers instead
        wide = np.abs(gap) >= _WIDE_GAP
        ok = np.zeros(m, dtype=bool)
        ok[~wide] = bernoulli_exp_vec(rng, gap[~wide] ** 2, 2 * t * c)
        if wide.any():
            bits = random.Random(int.from_bytes(rng.bytes(32), "little"))
            ok[wide] = [bernoulli_exp(bits, int(g) ** 2, 2 * t * c) for g in gap[wide]]
        return y, ok
    return _fill(n, propose)


def _gaussian_parameters(scale):
    """(t, c) with t c >= scale^2 rounded up, t = floor(scale) + 1."""
    num, den = _up(float(scale) ** 2), 2**8  # sigma^2 <= num / den
    t = math.isqrt(num // den) + 1
    c = -(-num // (den * t))  # ceil: t c >= num / den
    return t, c


def discrete_noise(rng, size, scale, noise="gaussian"):
    """``size`` independent integer draws (as float64) in grid units.

    ``scale`` is the Gaussian sigma or the Laplace scale, in grid units; it is
    rounded *up* (the Gaussian variance to t c, the Laplace scale to a
    multiple of 1/256): more noise than accounted, never less. The draws are
    a deterministic function of ``rng``'s state.
    """
    if noise == "gaussian":
        t, c = _gaussian_parameters(scale)
        if t * c <= _VECTOR_LIMIT:
            draws = discrete_gaussian_vec(rng, size, t, c)
            return draws.astype(np.float64)
    else:
        t = _up(scale)
        if t <= _VECTOR_LIMIT:
            return discrete_laplace_vec(rng, size, t, 2**8).astype(np.float64)
    return _discrete_noise_scalar(rng, size, scale, noise)


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
