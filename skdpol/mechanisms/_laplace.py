"""Laplace mechanisms: scalar, and the L2 ("multivariate") Laplace for vectors."""

import numpy as np
from dp_accounting import LaplaceDpEvent

from ..accounting import pure_dp_event


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


def sample_l2_laplace(rng, dim, scale, size=None):
    """Draw from the density proportional to exp(-||b||_2 / scale) on R^dim.

    The norm of such a vector is Gamma(dim, scale) and its direction uniform.
    """
    shape = (dim,) if size is None else (size, dim)
    direction = rng.standard_normal(shape)
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    radius = rng.gamma(dim, scale, size=None if size is None else (size, 1))
    return direction * radius


class L2LaplaceMechanism:
    """Pure epsilon-DP for vectors with an L2 sensitivity bound.

    Adds noise with density proportional to exp(-epsilon ||b||_2 / sensitivity).
    For neighbouring outputs a, b with ||a - b|| <= sensitivity the density
    ratio at any z is exp(epsilon (||z - b|| - ||z - a||) / sensitivity)
    <= exp(epsilon) by the triangle inequality.

    Its event is ``pure_dp_event(epsilon)``: the dominating pair of every
    epsilon-DP mechanism, so compositions computed from it are never too small.
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
        return pure_dp_event(self.epsilon)

    def randomise(self, value):
        value = np.asarray(value, dtype=np.float64)
        flat = value.reshape(-1)
        return value + sample_l2_laplace(self.rng, flat.size, self.scale).reshape(value.shape)
