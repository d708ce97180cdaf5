"""The BLT design: the optimiser, the stored designs' lookup, and the
reference points it is measured against (the tree, C = A^1/2)."""

import math
from functools import lru_cache

import numpy as np
from scipy import optimize

from ._blt_designs import DESIGNS, ONE_BUFFER_DESIGNS
from ._blt_value import BLT

__all__ = ["blt_for_horizon", "optimal_blt", "sqrt_factorization_errors", "tree_errors"]


# ------------------------------------------------------------ optimisation
def _unpack(p, d):
    # unconstrained -> omega > 0 (exp) and theta in (0, 1) (logistic)
    omega = np.exp(p[:d])
    theta = 1.0 / (1.0 + np.exp(-p[d:]))
    return omega, theta


def _loss(p, d, n, error):
    try:
        omega, theta = _unpack(p, d)
        blt = BLT(tuple(omega), tuple(theta))
        err = blt.max_error(n) if error == "max" else blt.rms_error(n)
        value = math.log(blt.sensitivity(n)) + math.log(err)
    except (ValueError, FloatingPointError, ZeroDivisionError):
        return 1e6
    return value if math.isfinite(value) else 1e6


@lru_cache(maxsize=32)
def optimal_blt(horizon, buffers=4, error="rms"):
    """The BLT minimising sensitivity x error (``"rms"`` or ``"max"``) at ``horizon``.

    A small L-BFGS optimisation over log omega and logit theta from
    geometrically spread decays, restarted from a few scalings of omega;
    cached per (horizon, buffers, error). Deterministic: it reads no data.
    """
    n, d = int(horizon), int(buffers)
    if n < 2:
        return BLT((1e-9,), (0.0,))  # one step: C = 1
    best = None
    # C should look like A^1/2, whose coefficients 1, 1/2, 3/8, ... decay
    # like k^-1/2: spread the decays from ~1/3 to ~1 - 1/n, sum omega ~ 1/2
    theta0 = 1.0 - np.logspace(-0.5, -math.log10(n), d)
    for scale in (0.5, 0.25):
        p0 = np.concatenate([np.log(np.full(d, scale / d)), np.log(theta0 / (1.0 - theta0))])
        res = optimize.minimize(_loss, p0, args=(d, n, error), method="Nelder-Mead",
                                options=dict(maxiter=3000, xatol=1e-6, fatol=1e-10))
        res = optimize.minimize(_loss, res.x, args=(d, n, error), method="L-BFGS-B")
        if best is None or res.fun < best.fun:
            best = res
    omega, theta = _unpack(best.x, d)
    return BLT(tuple(float(v) for v in omega), tuple(float(v) for v in theta))


def blt_for_horizon(horizon, buffers=4, error="rms"):
    """The BLT a stream of ``horizon`` steps uses: the stored design for the
    next power of two (4 buffers, RMSE, or 1 buffer up to 128 steps;
    :mod:`._blt_designs`) when there is one, else :func:`optimal_blt`."""
    k = max(1, (int(horizon) - 1).bit_length())
    stored = {4: DESIGNS, 1: ONE_BUFFER_DESIGNS}.get(buffers, {}) if error == "rms" else {}
    if k in stored:
        return BLT(*stored[k])
    return optimal_blt(int(horizon), buffers, error)


# ------------------------------------------------------- reference points
def sqrt_factorization_errors(n):
    """(sensitivity x max error, sensitivity x rms error) of C = A^1/2.

    Its coefficients are those of (1 - x)^(-1/2): r_k = binom(2k, k) / 4^k, and
    so are C^-1's... times (1 - x): B = A C^-1 = C, so both are the same
    Toeplitz matrix."""
    k = np.arange(1, n)
    r = np.concatenate([[1.0], np.cumprod((2 * k - 1) / (2 * k))])
    sens = math.sqrt(float(np.sum(r**2)))
    sq = np.cumsum(r**2)  # row t of B has norm sqrt(sum_{k<t} r_k^2)
    return sens * math.sqrt(sq[-1]), sens * math.sqrt(float(np.mean(sq)))


def tree_errors(n):
    """(max std, rms std) of the binary tree's prefix sums per unit
    multiplier, sensitivity sqrt(levels) (one node per level) and one node per
    set bit of t."""
    levels = (int(n) - 1).bit_length() + 1  # ceil(log2 n) + 1, as PrivatePrefixSum
    t = np.arange(1, n + 1)
    bits = np.zeros(n)
    for h in range(levels):
        bits += (t >> h) & 1
    return math.sqrt(levels * bits.max()), math.sqrt(levels * float(np.mean(bits)))
