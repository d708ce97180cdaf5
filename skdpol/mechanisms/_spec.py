"""One noise specification: family, sampler and multiplier, and the one calibration.

A :class:`NoiseSpec` is what a release needs to know about its noise: the
family (``"gaussian"``, or ``"laplace"`` for pure DP), the sampler
(``"discrete"``, the hardened exact path, or ``"float"``) and the multiplier
m (noise scale over sensitivity). It gives the cost of one release
(:meth:`NoiseSpec.event`), the release itself (:meth:`NoiseSpec.perturb`)
and the noise's standard deviation (:meth:`NoiseSpec.std`).

:meth:`NoiseSpec.calibrated` is the single place where a budget becomes a
multiplier: every production calibration (estimators, online algorithms,
kernel releases, selector, scaler, distributed protocols) goes through it.
The audit tests weaken the noise by patching this one method (scaling the
multiplier it returns), never through a production parameter.
"""

import math
from dataclasses import dataclass, replace

from ..accounting import calibrate_noise_multiplier
from ._discrete import SAMPLERS, grid_sensitivity, grid_step
from ._noise import noise_event, perturb

FAMILIES = ("gaussian", "laplace")


def family_for(epsilon, delta):
    """The noise family a budget needs: Laplace for pure DP (``delta=0``),
    Gaussian otherwise (``epsilon=inf`` draws no noise at all)."""
    return "laplace" if delta == 0 and not math.isinf(epsilon) else "gaussian"


@dataclass(frozen=True)
class NoiseSpec:
    """Noise family, sampler and multiplier of a release.

    Parameters
    ----------
    family : {"gaussian", "laplace"}, default="gaussian"
        Gaussian noise (accounted as Gaussian DP, or zCDP when discrete), or
        pure-DP noise (L2-Laplace; per-coordinate discrete Laplace on the L1
        bound when discrete).
    sampler : {"discrete", "float"}, default="discrete"
        See :mod:`skdpol.mechanisms._discrete`.
    multiplier : float, default=0.0
        Noise scale over sensitivity; 0 releases the exact value.

    Examples
    --------
    >>> spec = NoiseSpec.calibrated(1.0, 1e-5, family="gaussian", sampler="float")
    >>> round(spec.multiplier, 3), type(spec.event()).__name__
    (3.731, 'GaussianDpEvent')
    """

    family: str = "gaussian"
    sampler: str = "discrete"
    multiplier: float = 0.0

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"noise must be one of {FAMILIES}, got {self.family!r}.")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}.")

    # ----------------------------------------------------------- what it is
    @property
    def gaussian(self):
        return self.family == "gaussian"

    @property
    def discrete(self):
        return self.sampler == "discrete"

    @property
    def noiseless(self):
        return self.multiplier == 0

    def with_multiplier(self, multiplier):
        """The same family and sampler with another multiplier."""
        return replace(self, multiplier=float(multiplier))

    def scaled(self, factor):
        """The multiplier times ``factor`` (the audit tests' weakened noise)."""
        return replace(self, multiplier=self.multiplier * factor)

    # ----------------------------------------------------------- what it does
    def event(self):
        """The ``DpEvent`` of one release (or one tree node) with this noise."""
        return noise_event(self.multiplier, self.family, self.sampler)

    def perturb(self, value, sensitivity, rng, pool=None):
        """``value`` released with this noise; see :func:`~skdpol.mechanisms.perturb`."""
        return perturb(value, sensitivity=sensitivity, multiplier=self.multiplier,
                       noise=self.family, sampler=self.sampler, rng=rng, pool=pool)

    def std(self, sensitivity, dim):
        """Standard deviation of each coordinate of the noise :meth:`perturb` adds
        to a value of ``dim`` coordinates and L2 sensitivity ``sensitivity``.

        * float Gaussian: m Delta;
        * float L2-Laplace of scale s = m Delta: its norm is Gamma(dim, s), so
          E||b||^2 = s^2 dim (dim + 1) and each coordinate has std s sqrt(dim + 1);
        * discrete: integer noise on the grid of step h (:func:`grid_step`) at
          scale m Delta_h in grid units, where Delta_h is the grid's inflated
          sensitivity (:func:`grid_sensitivity`: L2 for the Gaussian, L1 for
          the Laplace); Gaussian std h m Delta_h, and discrete Laplace
          (P(k) ~ exp(-|k| / t), t = m Delta_h) std h sqrt(2 q) / (1 - q) with
          q = exp(-1 / t).

        Not included: the sampler rounds its scale up by less than 2^-12
        (relative), the discrete Gaussian's variance is below sigma^2 by an
        amount exponentially small in sigma, and a value huge against its
        sensitivity (over 2^50 grid steps) is released on a coarser grid,
        with proportionally more noise. Rounding the value to the grid moves
        it by at most h / 2 < Delta / 2048 per coordinate; that is not noise.
        """
        if self.multiplier == 0 or sensitivity == 0:
            return 0.0
        if not self.discrete:
            scale = self.multiplier * sensitivity
            return scale if self.gaussian else scale * math.sqrt(dim + 1)
        step = grid_step(sensitivity, dim)
        scale = self.multiplier * grid_sensitivity(sensitivity, dim, step, self.family)
        if self.gaussian:
            return step * scale
        q = math.exp(-1.0 / scale)
        return step * math.sqrt(2.0 * q) / -math.expm1(-1.0 / scale)

    # ----------------------------------------------------------- calibration
    @classmethod
    def calibrated(cls, epsilon, delta, *, family="gaussian", sampler="discrete",
                   make_event=None, releases=1):
        """The spec with the smallest multiplier whose release(s) cost (epsilon, delta).

        The one calibration of the package (tests patch it to weaken noise).

        Parameters
        ----------
        epsilon, delta : float
            Budget; ``epsilon=inf`` gives multiplier 0 (no noise). With
            ``family="laplace"`` the budget is pure (delta is not used).
        family, sampler : str
            As for :class:`NoiseSpec`.
        make_event : callable, optional
            ``m -> DpEvent`` of the whole mechanism at multiplier m (a tree, a
            round of K steps, ...), solved by
            :func:`~skdpol.accounting.calibrate_noise_multiplier`. Without it,
            the mechanism is ``releases`` releases of this noise: pure DP
            m = releases / epsilon exactly (epsilons add up), Gaussian /
            zCDP the multiplier whose ``releases``-fold composition, one
            release at m / sqrt(releases), costs the budget.
        releases : int, default=1
            Number of releases when ``make_event`` is None.
        """
        spec = cls(family, sampler)
        if math.isinf(epsilon):
            return spec
        if make_event is None:
            if family == "laplace":
                return spec.with_multiplier(releases / epsilon)
            root = math.sqrt(releases)
            m = calibrate_noise_multiplier(
                lambda m: noise_event(m / root, family, sampler), epsilon, delta)
            return spec.with_multiplier(m)
        m = calibrate_noise_multiplier(make_event, epsilon,
                                       0.0 if family == "laplace" else delta)
        return spec.with_multiplier(m)


class HoldsNoiseSpec:
    """Read-only views of an algorithm's noise, held as one ``self._spec``.

    The algorithms that keep a :class:`NoiseSpec` (MI-OGD, noisy GD, output
    perturbation) expose its parts under the names the estimators and tests
    read, instead of each repeating the same three properties.
    """

    @property
    def noise(self):
        return self._spec

    @property
    def noise_multiplier(self):
        return self._spec.multiplier

    @property
    def sampler(self):
        return self._spec.sampler
