"""Laplace mechanisms: scalar, and the L2 ("multivariate") Laplace for vectors."""

import numpy as np
from dp_accounting import LaplaceDpEvent

from ..accounting import pure_dp_event
from ._discrete import check_sampler
from ._noise import perturb


class LaplaceMechanism:
    """Scalar Laplace mechanism: add Lap(sensitivity / epsilon).

    Parameters
    ----------
    sensitivity : float
        Replace-one sensitivity |f(D) - f(D')|.
    epsilon : float
        Pure privacy parameter of one release.
    rng : numpy.random.Generator
    """

    def __init__(self, *, sensitivity, epsilon, rng):
        self.sensitivity = float(sensitivity)
        self.epsilon = float(epsilon)
        self.rng = rng

    @property
    def scale(self):
        return self.sensitivity / self.epsilon

    @property
    def event(self):
        return LaplaceDpEvent(1.0 / self.epsilon)

    def randomise(self, value):
        value = np.asarray(value, dtype=np.float64)
        return value + self.rng.laplace(0.0, self.scale, size=value.shape)


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

    def __init__(self, *, sensitivity, epsilon, rng, sampler="float"):
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
