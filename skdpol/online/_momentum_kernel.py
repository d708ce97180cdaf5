"""The momentum round's post-processing as one compiled loop.

Why. After the release, :meth:`MomentumFTRL._round
<skdpol.online._momentum.MomentumFTRL._round>` runs ~9 numpy operations over
its (k, d) vectors: the increment of the releases, its mean, the penalty,
the heavy ball, the step and the average, one pass over memory each (~0.35
ms a round at 2^17 + 1 columns). :func:`momentum_step` reads each input once
and writes each output once.

Bit for bit. Every coordinate goes through the numpy path's IEEE operations
in its order (the path stays, the reference: ``_momentum._KERNEL_WIDTH``):

    g        = (released - last) / b          [+ alpha theta, if alpha]
    velocity = momentum velocity + g
    theta'   = theta - lr velocity
    average' = (1 - rho) average + rho theta'

(numba compiles without fastmath: no product is fused into an add, nothing
is reassociated; ``1 - rho`` and ``b`` as a float are computed by the
caller, as numpy's scalars were).

In place. The loop writes ``velocity``, ``theta`` and ``average`` where
they are, and the caller makes sure they are its own (``MomentumFTRL._owned``:
no checkpoint shares them; else it copies them first). Why: separate output
arrays, which might alias the inputs as far as the compiler knows, keep the
loop from being vectorised (230 us against 110 us at 2^17 + 1 columns), and
fresh ones can cost page faults (``skdpol.mechanisms._blt_kernel``).

The wide classifier's per-coordinate cap (:mod:`._curvature`) has two more:
:func:`momentum_step_capped` (a few coordinates at their own rates, between
secant rounds) and :func:`momentum_step_secant` (a secant round: the new
rates from the releases, in the same pass). Their own float32 sums are
written into fresh arrays (the cap's state is replaced, never written in
place: no checkpoint copies it).
"""

import numpy as np

from ..utils import kernel

__all__ = ["momentum_step", "momentum_step_capped", "momentum_step_secant"]


@kernel
def momentum_step(released, last, rows, alpha, momentum, lr, keep, rho, velocity, theta,
                  average):
    """One round's post-processing, written into ``velocity``, ``theta`` and
    ``average`` ((k, d) arrays the caller owns). ``rows`` the round's rows
    as a float, ``keep`` = 1 - rho."""
    penalised = alpha != 0.0  # numpy's ``if alpha:`` (NaN too)
    for r in range(theta.shape[0]):
        for i in range(theta.shape[1]):
            t = theta[r, i]
            g = (released[r, i] - last[r, i]) / rows
            if penalised:
                g = g + alpha * t
            v = momentum * velocity[r, i] + g
            velocity[r, i] = v
            t = t - lr * v
            theta[r, i] = t
            average[r, i] = keep * average[r, i] + rho * t


def momentum_step_capped(released, last, rows, alpha, momentum, lr, keep, rho, velocity,
                         theta, average, capped, rates):
    """:func:`momentum_step` where the coordinates ``capped`` (flat indices
    into (k, d), sorted) step with ``rates`` (the wide classifier's cap
    between its secant rounds, :mod:`._curvature`).

    The loop over every coordinate is :func:`momentum_step` itself
    (vectorised); the inputs of ``capped`` are saved before it and their
    outputs recomputed after it with their own rates
    (:func:`_recompute_capped`): the same operations on the same inputs. (A
    loop over the runs between them, each run with ``lr``, was not
    vectorised: 2.5x slower.)"""
    saved = np.stack([a.reshape(-1)[capped] for a in (velocity, theta, average)], axis=1)
    momentum_step(released, last, rows, alpha, momentum, lr, keep, rho, velocity, theta,
                  average)
    _recompute_capped(released, last, rows, alpha, momentum, keep, rho, velocity, theta,
                      average, capped, rates, saved)


@kernel
def _recompute_capped(released, last, rows, alpha, momentum, keep, rho, velocity, theta,
                      average, capped, rates, saved):
    """The coordinates ``capped`` of :func:`momentum_step_capped` stepped
    again from their inputs ``saved`` ((m, 3): velocity, theta, average
    before the step) with their own ``rates``."""
    penalised = alpha != 0.0
    flat_v, flat_t, flat_a = velocity.reshape(-1), theta.reshape(-1), average.reshape(-1)
    flat_released, flat_last = released.reshape(-1), last.reshape(-1)
    for p in range(capped.size):
        j = capped[p]
        t = saved[p, 1]
        g = (flat_released[j] - flat_last[j]) / rows
        if penalised:
            g = g + alpha * t
        v = momentum * saved[p, 0] + g
        flat_v[j] = v
        t = t - rates[p] * v
        flat_t[j] = t
        flat_a[j] = keep * saved[p, 2] + rho * t


@kernel
def momentum_step_secant(released, last, rows, alpha, momentum, lr, keep, rho, velocity,
                         theta, average, fixed, fixed_rates, before_last, num, den, new_num,
                         new_den, hits, previous_lr, decay, gate, kappa, bound, free_last):
    """A secant round of the wide classifier's cap (:mod:`._curvature`: its
    numpy lines, ``CurvatureCap.rates``, in their order): :func:`momentum_step`
    where each coordinate steps with its new rate.

    The change of the mean gradient is read from the releases
    (``before_last``: the one before ``last``) and the previous round's
    step from -rate v_prev (rate ``previous_lr``, but on the coordinates
    ``fixed``, flat indices into (k, d), ``fixed_rates``); the secant's
    sums are read from ``num`` / ``den`` and written into ``new_num`` /
    ``new_den`` (fresh float32 arrays); the new rate is kappa den / num
    where kappa den < lr num (num > 0; not the last column, the intercept,
    with ``free_last``), else lr, and ``hits`` (a bool (k, d) array) says
    where: the capped coordinates of the rounds up to the next secant
    round. ``gate``: GATE x the noise bound (0: no gate).

    The loop over every coordinate takes the previous round's scalar rate
    and is vectorised (the new rate is a select); the inputs of ``fixed``
    are saved before it and their outputs recomputed after it with their
    own previous rates: the same operations on the same inputs."""
    penalised = alpha != 0.0
    m = fixed.size
    d = theta.shape[1]
    free = d - 1 if free_last else -1  # the intercept's column
    flat_v, flat_t, flat_a = velocity.reshape(-1), theta.reshape(-1), average.reshape(-1)
    saved = np.empty((m, 3))
    for p in range(m):
        j = fixed[p]
        saved[p, 0], saved[p, 1], saved[p, 2] = flat_v[j], flat_t[j], flat_a[j]
    for r in range(theta.shape[0]):
        for i in range(d):
            t = theta[r, i]
            g = (released[r, i] - last[r, i]) / rows
            v_prev = velocity[r, i]
            dtheta = -(previous_lr * v_prev)
            # g_t - g_{t-1}: the releases' second difference over b, and the
            # penalty's alpha (theta_{t-1} - theta_{t-2})
            dg = g - (last[r, i] - before_last[r, i]) / rows
            if penalised:
                g = g + alpha * t
                dg = dg + alpha * dtheta
            v = momentum * v_prev + g
            velocity[r, i] = v
            term = dg * dtheta
            if gate > 0.0 and not abs(dg) > gate:
                term = 0.0
            # the sums kept as float32 (half the bytes), read back as stored
            n = np.float64(np.float32(decay * np.float64(num[r, i]) + term))
            dd = np.float64(np.float32(decay * np.float64(den[r, i]) + dtheta * dtheta))
            new_num[r, i] = n
            new_den[r, i] = dd
            kd = kappa * dd
            hit = (n > 0.0) & (bound * dd < lr * n) & (i != free)  # (no branch: vectorised)
            hits[r, i] = hit
            rate = lr
            if hit:
                rate = kd / n
            t = t - rate * v
            theta[r, i] = t
            average[r, i] = keep * average[r, i] + rho * t
    flat_released, flat_last = released.reshape(-1), last.reshape(-1)
    flat_before, flat_num, flat_den = before_last.reshape(-1), num.reshape(-1), den.reshape(-1)
    flat_new_num, flat_new_den = new_num.reshape(-1), new_den.reshape(-1)
    flat_hits = hits.reshape(-1)
    for p in range(m):  # the coordinates whose previous step had their own rate
        j = fixed[p]
        v_prev, t = saved[p, 0], saved[p, 1]
        g = (flat_released[j] - flat_last[j]) / rows
        dtheta = -(fixed_rates[p] * v_prev)
        dg = g - (flat_last[j] - flat_before[j]) / rows
        if penalised:
            g = g + alpha * t
            dg = dg + alpha * dtheta
        v = momentum * v_prev + g
        term = dg * dtheta
        if gate > 0.0 and not abs(dg) > gate:
            term = 0.0
        n = np.float64(np.float32(decay * np.float64(flat_num[j]) + term))
        dd = np.float64(np.float32(decay * np.float64(flat_den[j]) + dtheta * dtheta))
        flat_new_num[j] = n
        flat_new_den[j] = dd
        kd = kappa * dd
        hit = (n > 0.0) & (bound * dd < lr * n) & (j % d != free)
        flat_hits[j] = hit
        rate = lr
        if hit:
            rate = kd / n
        flat_v[j] = v
        t = t - rate * v
        flat_t[j] = t
        flat_a[j] = keep * saved[p, 2] + rho * t
