"""Laplace mechanisms: scalar, and the L2 ("multivariate") Laplace for vectors."""

import numpy as np
from dp_accounting import LaplaceDpEvent

from ..accounting import pure_dp_event
from ._discrete import check_sampler, discrete_noise, grid_sensitivity, grid_step, quantise
from ._noise import perturb


class LaplaceMechanism:
    """Scalar Laplace mechanism: add Lap(sensitivity / epsilon) to each value.

    Parameters
    ----------
    sensitivity : float
        Replace-one sensitivity |f(D) - f(D')| of each value released.
    epsilon : float
        Pure privacy parameter of one release of one value.
    rng : numpy.random.Generator
        Source of the noise (curator state: it must stay secret).
    sampler : {"discrete", "float"}, default="discrete"
        ``"discrete"``: the value is rounded to a grid a thousand times finer
        than the sensitivity and exact discrete Laplace noise is added
        (:mod:`skdpol.mechanisms._discrete`), calibrated to the rounded
        sensitivity, so the release carries nothing in its low-order bits.
        ``"float"``: numpy's floating-point Laplace draw, whose low-order
        bits can rule neighbours out (Mironov 2012).

    Notes
    -----
    Both samplers are epsilon-DP for each value; the event of the discrete
    one is ``pure_dp_event(epsilon)`` (dp-accounting's ``LaplaceDpEvent``
    describes the continuous Laplace's privacy loss, not the discrete one's).
    """

    def __init__(self, *, sensitivity, epsilon, rng, sampler="discrete"):
        check_sampler(sampler)
        self.sensitivity = float(sensitivity)
        self.epsilon = float(epsilon)
        self.rng = rng
        self.sampler = sampler

    @property
    def scale(self):
        return self.sensitivity / self.epsilon

    @property
    def event(self):
        if self.sampler == "discrete":
            return pure_dp_event(self.epsilon)
        return LaplaceDpEvent(1.0 / self.epsilon)

    def randomise(self, value):
        value = np.asarray(value, dtype=np.float64)
        if self.sampler == "float":
            return value + self.rng.laplace(0.0, self.scale, size=value.shape)
        # each value is its own scalar release on the 1-d grid; all at once
        # when every value fits the fine grid, else one at a time (perturb
        # coarsens the grid of a value huge against its sensitivity)
        flat = value.reshape(-1)
        step = grid_step(self.sensitivity, 1)
        if flat.size and float(np.max(np.abs(flat))) / step < 2.0**50:
            scale = grid_sensitivity(self.sensitivity, 1, step, "laplace") / self.epsilon
            out = (quantise(flat, step) + discrete_noise(self.rng, flat.size, scale,
                                                         "laplace")) * step
        else:
            out = np.array([perturb(v, sensitivity=self.sensitivity,
                                    multiplier=1.0 / self.epsilon, noise="laplace",
                                    sampler="discrete", rng=self.rng) for v in flat])
        return out.reshape(value.shape)


class L2LaplaceMechanism:
    """Pure epsilon-DP for vectors with an L2 sensitivity bound.

    ``sampler="discrete"`` replaces the L2-Laplace draw by exact discrete
    Laplace noise per coordinate on a grid, calibrated to the L1 bound
    sqrt(d) x the L2 one (see :mod:`skdpol.mechanisms._discrete`); same
    epsilon, about sqrt(2) times the noise norm.

    Adds noise with density proportional to exp(-epsilon ||b||_2 / sensitivity).
    For neighbouring outputs a, b with ||a - b|| <= sensitivity the density
    ratio at any z is exp(epsilon (||z - b|| - ||z - a||) / sensitivity)
    <= exp(epsilon) by the triangle inequality.

    Its event is ``pure_dp_event(epsilon)``: the dominating pair of every
    epsilon-DP mechanism, so compositions computed from it are never too small.
    """

    def __init__(self, *, sensitivity, epsilon, rng, sampler="discrete"):
        check_sampler(sampler)
        self.sensitivity = float(sensitivity)
        self.epsilon = float(epsilon)
        self.rng = rng
        self.sampler = sampler

    @property
    def scale(self):
        return self.sensitivity / self.epsilon

    @property
    def event(self):
        return pure_dp_event(self.epsilon)

    def randomise(self, value):
        return perturb(value, sensitivity=self.sensitivity, multiplier=1.0 / self.epsilon,
                       noise="laplace", sampler=self.sampler, rng=self.rng)
