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
"""

from ..utils import kernel

__all__ = ["momentum_step", "momentum_step_capped"]


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


@kernel
def momentum_step_capped(released, last, rows, alpha, momentum, lr, keep, rho, velocity,
                         theta, average, previous_g, previous_theta, num, den, has_previous,
                         decay, gate, kappa, free_last):
    """:func:`momentum_step` with the wide classifier's per-coordinate cap
    (:mod:`._curvature`: its numpy lines, ``CurvatureCap.rates``, in their
    order), also writing the secant's state ``previous_g``,
    ``previous_theta``, ``num`` and ``den`` in place. ``has_previous``:
    round 2 on; ``gate``: GATE x the noise bound (0: no gate); ``free_last``:
    the last column (the intercept) keeps ``lr``."""
    penalised = alpha != 0.0
    free = theta.shape[1] - 1 if free_last else -1  # the intercept's column
    for r in range(theta.shape[0]):
        for i in range(theta.shape[1]):
            t = theta[r, i]
            g = (released[r, i] - last[r, i]) / rows
            if penalised:
                g = g + alpha * t
            v = momentum * velocity[r, i] + g
            velocity[r, i] = v
            rate = lr
            if has_previous:
                dg = g - previous_g[r, i]
                dtheta = t - previous_theta[r, i]
                term = dg * dtheta
                if gate > 0.0 and not abs(dg) > gate:
                    term = 0.0
                n = decay * num[r, i] + term
                num[r, i] = n
                dd = decay * den[r, i] + dtheta * dtheta
                den[r, i] = dd
                # kappa / h = kappa den / num where num > 0 (a select the
                # compiler vectorises: a branch around the division ran 2x slower)
                if n > 0.0 and i != free:
                    rate = min(lr, kappa * dd / n)
            previous_g[r, i] = g
            previous_theta[r, i] = t
            t = t - rate * v
            theta[r, i] = t
            average[r, i] = keep * average[r, i] + rho * t
