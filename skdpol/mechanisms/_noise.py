"""Noise for a release, on either sampling path, and the event it costs.

``sampler="float"`` draws floating-point Gaussian or L2-Laplace noise (fast;
its low-order bits can leak, see :mod:`._discrete`); ``sampler="discrete"``
is the hardened path of :mod:`._discrete`. Both take the same noise
multiplier m (noise scale over sensitivity), so calibration is shared.
"""

import math

import numpy as np
from dp_accounting import GaussianDpEvent, ZCDpEvent

from ..accounting import pure_dp_event
from ._discrete import discrete_noise, grid_sensitivity, grid_step, quantise


def sample_l2_laplace(rng, dim, scale, size=None):
    """Draw from the density proportional to exp(-||b||_2 / scale) on R^dim.

    The norm of such a vector is Gamma(dim, scale) and its direction uniform.
    """
    shape = (dim,) if size is None else (size, dim)
    direction = rng.standard_normal(shape)
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    radius = rng.gamma(dim, scale, size=None if size is None else (size, 1))
    return direction * radius


class DiscreteNoisePool:
    """Integer noise for ``count`` future :func:`perturb` calls, drawn at once.

    The noise of a release does not depend on the value released, so the
    draws of K releases of the same length, sensitivity and multiplier can
    be made in one vectorised call (the exact sampler's cost is mostly its
    per-call passes). ``perturb(..., pool=pool)`` takes the next row when the
    release uses the pool's grid; a release on a coarser grid (a value huge
    against its sensitivity) draws its own noise. Curator state.
    """

    def __init__(self, *, count, dim, sensitivity, multiplier, noise="gaussian", rng):
        self.step = grid_step(sensitivity, dim)
        self.scale = multiplier * grid_sensitivity(sensitivity, dim, self.step, noise)
        self._draws = discrete_noise(rng, count * dim, self.scale, noise).reshape(count, dim)
        self._next = 0

    def take(self):
        if self._next >= self._draws.shape[0]:
            raise RuntimeError("the noise pool is used up.")  # a bug, never data
        row = self._draws[self._next]
        self._next += 1
        return row


def perturb(value, *, sensitivity, multiplier, noise="gaussian", sampler="discrete", rng,
            pool=None):
    """Release ``value`` with noise of ``multiplier`` x ``sensitivity``.

    ``sampler="float"``: Gaussian noise of standard deviation m Delta, or
    L2-Laplace noise of scale m Delta (density ~ exp(-||b|| / (m Delta))).
    ``sampler="discrete"``: the hardened path of :mod:`._discrete` (grid, inflated
    sensitivity, exact integer noise). Either way the cost is one Gaussian
    (zCDP for "discrete") or one (1 / m)-DP mechanism: see
    :func:`noise_event`.
    """
    value = np.asarray(value, dtype=np.float64)
    if multiplier == 0 or sensitivity == 0:
        return value.copy()
    if sampler == "float":
        scale = multiplier * sensitivity
        if noise == "gaussian":
            return value + rng.normal(0.0, scale, size=value.shape)
        return value + sample_l2_laplace(rng, value.size, scale).reshape(value.shape)
    step = grid_step(sensitivity, value.size)
    # keep rint(value / step) + noise exact in float64 (below 2^51 in magnitude):
    # a value huge against its sensitivity gets a coarser grid, and the
    # sensitivity inflation below follows the grid actually used
    peak = float(np.max(np.abs(value), initial=0.0))
    if peak > 0 and peak / step >= 2.0**50:
        step = math.ldexp(1.0, math.frexp(peak)[1] - 50)
    if pool is not None and step == pool.step:
        draws = pool.take().reshape(value.shape)
    else:
        scale = multiplier * grid_sensitivity(sensitivity, value.size, step, noise)
        draws = discrete_noise(rng, value.size, scale, noise).reshape(value.shape)
    return (quantise(value, step) + draws) * step


def noise_event(multiplier, noise="gaussian", sampler="discrete"):
    """The ``DpEvent`` of :func:`perturb` (or of a tree node) with this multiplier."""
    if noise == "laplace":
        return pure_dp_event(1.0 / multiplier)
    if sampler == "discrete":
        return ZCDpEvent(rho=np.inf if multiplier == 0 else 0.5 / multiplier**2)
    return GaussianDpEvent(multiplier)
