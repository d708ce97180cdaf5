"""The Gaussian mechanism."""

from dp_accounting import GaussianDpEvent


class GaussianMechanism:
    """Add N(0, (noise_multiplier * sensitivity)^2) to every coordinate.

    Parameters
    ----------
    sensitivity : float
        Replace-one L2 sensitivity of the value to release.
    noise_multiplier : float
        Noise standard deviation in units of ``sensitivity``.
    rng : numpy.random.Generator
        Source of the noise (curator state: it must stay secret).

    Notes
    -----
    Two neighbouring outputs are N(a, s^2 I) and N(b, s^2 I) with
    ||a - b|| <= sensitivity; in units of the sensitivity that is a shift of
    at most 1 with standard deviation ``noise_multiplier``, which is exactly
    ``GaussianDpEvent(noise_multiplier)``.
    """

    def __init__(self, *, sensitivity, noise_multiplier, rng):
        self.sensitivity = float(sensitivity)
        self.noise_multiplier = float(noise_multiplier)
        self.rng = rng

    @property
    def noise_std(self):
        return self.noise_multiplier * self.sensitivity

    @property
    def event(self):
        return GaussianDpEvent(self.noise_multiplier)

    def randomise(self, value):
        """Return ``value`` plus fresh Gaussian noise (same shape)."""
        return value + self.rng.normal(0.0, self.noise_std, size=value.shape)
