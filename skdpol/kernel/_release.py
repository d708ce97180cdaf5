"""``fit``'s one release for seed 003 (KORLS): the final iterate, once.

:class:`~skdpol.kernel.KernelORLS` bounds the replace-one sensitivity of its
iterate after n rows, for whichever row was replaced, by the public Delta_n
(module :mod:`skdpol.kernel._korls`). ``fit`` publishes only the final
iterate, so one Gaussian (or L2-Laplace, ``delta=0``) release of
sensitivity Delta_n is the whole cost: the multiplier of a single
(epsilon, delta)-DP release. Projecting the noisy iterate onto the public
ball ||w|| <= B_n that contains the exact one is free post-processing.

The continual release of ``partial_fit`` is
:class:`~skdpol.online.OutputPerturbation` with the same Delta. (A schedule
with a constant noise *scale*, calibrated to the sum of the squared
sensitivities of all rounds, was tried: over a planned horizon it has the
same mean noise variance but, since Delta_n decreases, always more noise
on the final model than the constant multiplier, so it was dropped.)
"""

import math

from dp_accounting import NoOpDpEvent

from ..mechanisms import NoiseSpec
from ..online import project_ball


def final_release(base, X, y, *, epsilon, delta, noise, rng):
    """fit's release: learn every row, release the final iterate once.

    ``noise`` is a :class:`~skdpol.mechanisms.NoiseSpec` giving the family and
    sampler (the one release is calibrated here from the budget).

    Rows of an incomplete last round are held by ``base`` and not used.

    Returns
    -------
    W : ndarray of shape (1, D)
        Noisy iterate projected onto the ball of radius ``base.radius``.
    event : DpEvent
        The calibrated spec's event; ``NoOpDpEvent`` without noise
        (``epsilon=inf``, or no complete round).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.kernel import KernelORLS
    >>> from skdpol.mechanisms import NoiseSpec
    >>> base = KernelORLS(n_components=2, theta=0.75, y_bound=1.0, batch_size=5)
    >>> X = np.tile([[0.6, 0.8]], (100, 1)); y = np.full(100, 0.5)
    >>> W, event = final_release(base, X, y, epsilon=1.0, delta=1e-5, noise=NoiseSpec(),
    ...                          rng=np.random.default_rng(0))
    >>> W.shape, type(event).__name__, bool(np.linalg.norm(W) <= base.radius)
    ((1, 2), 'ZCDpEvent', True)
    """
    spec = _final_spec(epsilon, delta, noise)
    base.learn(X, y)
    sens = base.sensitivity()
    if sens == 0 or math.isinf(epsilon):
        return base.W.copy(), NoOpDpEvent()
    noisy = spec.perturb(base.W, sens, rng)
    return project_ball(noisy, base.radius), spec.event()


def _final_spec(epsilon, delta, noise):
    return NoiseSpec.calibrated(epsilon, delta, family=noise.family,
                                sampler=noise.sampler)  # one release


def final_event(*, epsilon, delta, noise, n_rounds):
    """The event :func:`final_release` states once its base has completed
    ``n_rounds`` rounds, from public counts only: the base's sensitivity is
    positive from its first round on (a row moves the iterate), so one
    calibrated release then, nothing before (or without noise)."""
    if n_rounds == 0 or math.isinf(epsilon):
        return NoOpDpEvent()
    return _final_spec(epsilon, delta, noise).event()
