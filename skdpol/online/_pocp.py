"""Output perturbation: POCP (continual release) and POL (one release).

POCP (seed 002 Algorithm 1) keeps a non-private algorithm's iterate W_t as
curator state and publishes Pi_C(W_t + b_t); the noise never feeds back.
Release t costs one Gaussian (or L2-Laplace) mechanism of sensitivity
Delta_t (the base algorithm's ``sensitivity()``) and noise scale
m_t Delta_t. Gaussian releases compose exactly: k of them with multipliers
m_t are one Gaussian with 1 / m^2 = sum 1 / m_t^2 (Gaussian DP), which is
how the spend is accounted; L2-Laplace releases add their epsilons 1 / m_t.

Schedules (``horizon`` = T rounds):

* finite T: m_t = m calibrated so that T releases cost (epsilon, delta);
  only the releases that happen are charged (the model after each
  ``partial_fit`` call, not after every round);
* T = None: m_t = m sqrt(w_t) (Gaussian) or m w_t (Laplace) with
  w_t = S (t + 1) ln^2(t + 1) and S = sum_{n >= 2} 1 / (n ln^2 n), so that
  sum_t 1 / w_t = 1 and any number of releases costs at most one release of
  multiplier m. The noise still falls like Delta_t sqrt(t) ln t ~ ln t / sqrt t.
* ``calibration="paper"``: the seed's beta with lambda_A = t Delta_t,
  m = T^(0.5+c) sqrt((2/eps')(ln(T/delta') + sqrt(eps')/T^(0.5+c))),
  c = ln(0.5 ln(2/delta')) / (2 ln T), at (eps', delta') = (eps/3, delta/2)
  because the seed's Theorem 1 proves (3 eps', 2 delta'). Its true cost is
  accounted like any other.

The seed's Lemma 4 states IGD's sensitivity as 2L/t; its proof drops the
step size 1/(alpha t), so the true bound is 2L/(alpha (t+1)) (see
:mod:`skdpol.online._gradient`). "paper" therefore applies the seed's
formula in units of the correct sensitivity: read literally (lambda_A = 2L)
it would under-noise by a factor 1/alpha.

POL (seed 002 Algorithm 6) averages the iterates of one pass (by default
the last half of them) and publishes the average once. A replaced row moves
the average by at most the mean of the averaged iterates' sensitivities
(triangle inequality), about 2 L ln T / (alpha b T) over all of them for IGD, and one Gaussian / L2-Laplace release of that sensitivity is the
whole cost. Its "paper" multiplier is the seed's beta over the same
sensitivity, sqrt(2 (ln(1/delta) + eps)) / eps.
"""

import math

import numpy as np
from dp_accounting import GaussianDpEvent, NoOpDpEvent, ZCDpEvent

from ..accounting import pure_dp_event
from ..mechanisms import NoiseSpec
from ..mechanisms import HoldsNoiseSpec
from ._rounds import project_ball

# an upper bound on sum_{n >= 2} 1 / (n ln^2 n): the first 10^7 terms plus
# 1 / ln(10^7 - 1), which bounds the tail (2.10974...), rounded up; so
# sum_t 1 / w_t <= 1
_LOG_SQUARED_SUM = 2.1098


def _weight(t):
    return _LOG_SQUARED_SUM * (t + 1) * math.log(t + 1) ** 2


def paper_multiplier(epsilon, delta, n_rounds):
    """Seed 002's beta / lambda_A (Algorithm 1) at (epsilon/3, delta/2)."""
    eps, dlt = epsilon / 3.0, delta / 2.0
    T = max(n_rounds, 2)
    c = math.log(0.5 * math.log(2.0 / dlt)) / (2.0 * math.log(T))
    power = T ** (0.5 + c)
    return power * math.sqrt(2.0 / eps * (math.log(T / dlt) + math.sqrt(eps) / power))


class OutputPerturbation(HoldsNoiseSpec):
    """POCP: publish noisy copies of a base algorithm's iterates.

    Parameters
    ----------
    base : ImplicitGD or ProjectedGD
        Its iterate and ``sensitivity()``; curator state.
    epsilon, delta : float
        Budget of the whole stream (``epsilon=inf``: no noise).
    noise : NoiseSpec
        Family and sampler of the releases' noise (its multiplier is not
        used: the releases are calibrated here from the budget). Discrete
        Gaussian releases (:func:`skdpol.mechanisms.perturb`) are accounted
        as zCDP (their rhos add up).
    calibration : {"tight", "paper"}
    rng : numpy.random.Generator
        Curator state.
    """

    def __init__(self, base, *, epsilon, delta, noise, calibration="tight", rng):
        self.base = base
        self._rng = rng
        self._mu2 = 0.0  # sum of 1 / m_t^2 (Gaussian releases)
        self._eps = 0.0  # sum of 1 / m_t (Laplace releases)
        self.releases = 0
        self._published = base.W.copy()
        # rounds that read no row (GIGA's warm-up) release data-free points
        T = None if base.horizon is None else max(base.horizon - base.free_rounds, 1)
        self._count = T
        if calibration == "paper" and not math.isinf(epsilon):
            self._spec = noise.with_multiplier(paper_multiplier(epsilon, delta, T))
        else:  # T releases (an unbounded stream: the weights make them cost one)
            self._spec = NoiseSpec.calibrated(epsilon, delta, family=noise.family,
                                              sampler=noise.sampler,
                                              releases=1 if T is None else T)

    @property
    def n_rounds(self):
        return self.base.n_rounds

    @property
    def n_rows_used(self):
        return self.base.n_rows_used

    @property
    def published(self):
        return self._published

    def check_room(self, n_rows):
        self.base.check_room(n_rows)

    def multiplier(self, t):
        """Noise multiplier of a release after round t."""
        if self._count is not None:
            return self._spec.multiplier
        w = _weight(t)
        return self._spec.multiplier * (math.sqrt(w) if self._spec.gaussian else w)

    def _release(self):
        sens = self.base.sensitivity()
        W = self.base.W
        if sens > 0 and self._spec.multiplier > 0:
            m = self.multiplier(self.base.n_rounds)
            W = project_ball(self._spec.with_multiplier(m).perturb(W, sens, self._rng),
                             self.base.radius)
            if self._spec.gaussian:
                self._mu2 += 1.0 / m**2
            else:
                self._eps += 1.0 / m
        self._published = W.copy()
        self.releases += 1

    def learn(self, X, y, trace=False):
        """Consume rows and publish; see :meth:`RoundBuffer.learn`."""
        before = self.base.n_rounds
        models = [self._published.copy()] if trace else None
        for _ in self.base.run(X, y):
            if trace:
                self._release()
                models.append(self._published.copy())
        if not trace:
            if self.base.n_rounds > before:
                self._release()
            return None
        return np.array(models[:-1]).reshape(-1, *self._published.shape)

    def flush(self):
        """The base's final round (:meth:`RoundBuffer.flush`: the waiting rows
        and zero rows, an ordinary round of ``batch_size`` rows), released
        like every round. Returns the number of zero rows added."""
        base = self.base
        waiting = base._pending_X.shape[0]
        if not waiting:
            return 0
        pad = base.batch_size - waiting
        X = np.concatenate([base._pending_X, np.zeros((pad, base._pending_X.shape[1]))])
        y = np.concatenate([base._pending_y, np.zeros(pad)])
        base._pending_X, base._pending_y = base._pending_X[:0], base._pending_y[:0]
        self.learn(X, y)
        return pad

    def event(self):
        """DpEvent of every release so far."""
        return self._event_of(self._mu2, self._eps)

    def event_after(self, n_rounds, trace=False, final=False):
        """The ``event()`` once ``n_rounds`` rounds are complete, from public
        counts only (nothing changes): a release after each new round with
        ``trace``, else one after the last (if any), as :meth:`learn`; with
        ``final``, then one more after the final round of :meth:`flush`. A
        release after round t is noised when t > ``base.free_rounds`` (the
        base's sensitivity is 0 before), as :meth:`_release`."""
        mu2, eps = self._mu2, self._eps
        before = self.base.n_rounds
        if self._spec.multiplier > 0 and (n_rounds > before or final):
            first = self.base.free_rounds + 1
            times = []
            if n_rounds > before:
                times = (range(max(before + 1, first), n_rounds + 1) if trace
                         else ([n_rounds] if n_rounds >= first else []))
            if final and n_rounds + 1 >= first:
                times = [*times, n_rounds + 1]
            # the same sums, in the same order, as the releases would make them
            for t in times:
                m = self.multiplier(t)
                if self._spec.gaussian:
                    mu2 += 1.0 / m**2
                else:
                    eps += 1.0 / m
        return self._event_of(mu2, eps)

    def _event_of(self, mu2, eps):
        if self._spec.gaussian and mu2 > 0:
            if self._spec.discrete:
                return ZCDpEvent(rho=0.5 * mu2)
            return GaussianDpEvent(1.0 / math.sqrt(mu2))
        if not self._spec.gaussian and eps > 0:
            return pure_dp_event(eps)
        return NoOpDpEvent()


def paper_offline_multiplier(epsilon, delta):
    """Seed 002 Algorithm 6's beta over its sensitivity: sqrt(2 (ln(1/delta) + eps)) / eps."""
    return math.sqrt(2.0 * (math.log(1.0 / delta) + epsilon)) / epsilon


def offline_release(base, X, y, *, epsilon, delta, noise, rng, calibration="tight"):
    """POL: one pass of ``base``, then one noisy release of the averaged iterate.

    ``noise`` is a :class:`~skdpol.mechanisms.NoiseSpec` giving the family and
    sampler (the release is calibrated here from the budget).

    The tight calibration averages the last half of the iterates (suffix
    averaging): early iterates are the least accurate and the most
    sensitive, so dropping them lowers both the bias and the mean
    sensitivity (mean of 2L / (alpha b t) over t > T/2 is about
    2L ln 2 / (alpha b T/2), against 2L ln T / (alpha b T) for all of them).
    ``calibration="paper"`` averages every iterate, as seed 002 Algorithm 6.

    Returns
    -------
    W : ndarray (k, d)
    event : DpEvent
    """
    total = np.zeros_like(base.W)
    sens_total, count = 0.0, 0
    first = _first_averaged(X.shape[0], base.batch_size, calibration)
    for r, _ in enumerate(base.run(X, y)):
        sens = base.sensitivity()
        if sens > 0 and r >= first:  # GIGA's warm-up points carry no data
            total += base.W
            sens_total += sens
            count += 1
    if count == 0:
        return base.W.copy(), NoOpDpEvent()
    mean, sens = total / count, sens_total / count
    if math.isinf(epsilon):
        return mean, NoOpDpEvent()
    spec = _offline_spec(epsilon, delta, noise, calibration)
    noisy = spec.perturb(mean, sens, rng)
    return project_ball(noisy, base.radius), spec.event()


def _first_averaged(n_rows, batch_size, calibration):
    """POL's first averaged round: all of them ("paper"), else the last half."""
    return 0 if calibration == "paper" else (n_rows // batch_size) // 2


def _offline_spec(epsilon, delta, noise, calibration):
    """POL's one release: the seed's beta ("paper") or the calibrated multiplier."""
    if calibration == "paper":
        return noise.with_multiplier(paper_offline_multiplier(epsilon, delta))
    return NoiseSpec.calibrated(epsilon, delta, family=noise.family, sampler=noise.sampler)


def offline_event(base, n_rows, *, epsilon, delta, noise, calibration="tight"):
    """The event :func:`offline_release` of a fresh ``base`` states after
    ``n_rows`` rows, from public counts only (no row read, ``base`` unchanged).

    The release averages the rounds r >= the first averaged one whose
    iterate has a positive sensitivity, which the bases give after their
    data-free rounds (``base.free_rounds``: GIGA's warm-up; IGD has none):
    none of them, nothing is noised (``NoOpDpEvent``).
    """
    n_rounds = n_rows // base.batch_size
    first = max(_first_averaged(n_rows, base.batch_size, calibration), base.free_rounds)
    if first >= n_rounds or math.isinf(epsilon):
        return NoOpDpEvent()
    return _offline_spec(epsilon, delta, noise, calibration).event()
