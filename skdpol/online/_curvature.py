"""A per-coordinate cap on the wide classifier's step, read from its releases.

Why. The wide classifier's heavy ball (:mod:`._momentum`, beta = 0.95) takes
lr = b / (25 R~^2) on each round's mean gradient, with no cap on b (2,000
rows a round at 2^17 columns and epsilon = inf, 5,000 at epsilon 1). The
mean logistic loss's curvature along a direction u is (1/4) mean((u.x)^2) <=
R~^2 / 4, so lr lambda can reach b / 100 = 20-50, while heavy ball is stable
only for lr lambda < 2 (1 + beta) = 3.9. On hashed rows the mass is spread
over 2^17 columns and no direction comes near the bound, so the big step
works (it is what lets the wide stream match SGD); a column shared by most
rows (a token of value 0.8 in every row: 64 % of each row's squared norm)
oscillates, and the stream fell to 0.53-0.62 accuracy where one pass of
SGD reaches 0.63-0.65 (``docs/benchmarks/wide_stability.md``). One global
cap on lr fixes those rows but costs plain hashed rows 0.03-0.05.

The rule (a diagonal secant). A round releases G_t, the prefix sum of the
leaves, and steps on g_t = (G_t - G_{t-1}) / b + alpha theta_{t-1}, the mean
gradient at theta_{t-1}; so g_t - g_{t-1} ~ H (theta_{t-1} - theta_{t-2}),
and along coordinate j the curvature is estimated by least squares over the
secant rounds (``secant_round``: rounds 2-5, then every 8th), with decay
``DECAY``. On a secant round t:

    dtheta_j = theta_{t-1} - theta_{t-2} = -lr_{t-1,j} v_{t-1,j}  (round t-1's step)
    dg_j     = (G_t - 2 G_{t-1} + G_{t-2})_j / b + alpha dtheta_j
             = g_t - g_{t-1}
    num_j    = DECAY num_j + dg_j dtheta_j      (dg_j kept only past the noise gate)
    den_j    = DECAY den_j + dtheta_j^2         (both kept as float32)
    h_j      = num_j / den_j
    lr_j     = kappa / h_j = kappa den_j / num_j  where lr h_j > 2 (1 + beta)
               (num_j > 0; kappa = WIDE_CURVATURE_CAP = 2), else lr

and the other rounds keep the last secant round's lr_j. Coordinates whose
releases show no curvature past heavy ball's bound keep lr exactly (the
same floats as the scalar step); one that does steps at kappa / h_j, about
half the bound. Capping from kappa on (lr_j = min(lr, kappa / h_j), the
first version of this rule) also took the columns with lr h_j in (2, 3.9),
stable already: a few thousand of the 2^17 on hashed rows at epsilon = inf,
the same accuracy (plain hashed rows 0.6864 / 0.6922 / 0.7030 against
0.6874 / 0.6928 / 0.7028 with the bound, seeds 0-2, secant rounds 2-8 and
every 16th; the tokens' rows level) for a fix-up of each one every round.
The secant rounds: the rule needs
the cap from round 2 on (applied one round late, the 0.8 token's rows fell
from 0.636 to 0.607 at epsilon = inf, seed 0: the first full step throws the
shared column into the flat part of the loss), and keeps it from there;
every round (the first version) and 2-5 then every 8th give the same
accuracy (``docs/benchmarks/wide_stability.md``) for 10 secant rounds
instead of 49 at epsilon = inf (6 instead of 19 at epsilon 1). dtheta is the
step the stream took (no iterate is kept: it is -lr_j v_prev up to the
rounding of theta's subtraction) and dg the releases' second difference
(no gradient is kept: the stream holds G_{t-1}, and G_{t-2} by reference
before a secant round).

The noise gate: with a finite epsilon the released increments carry noise
of the same std on every coordinate, and a product of two noisy differences
is biased upward (the increment's noise enters both dg and, through the
velocity, dtheta); a term counts only where |dg_j| passes ``GATE`` = 4 times
a public bound on its noise std, (s_t + 2 s_{t-1} + s_{t-2}) / b (s the
mechanism's prefix-noise std, ``noise_std_at``: dg is the second difference
of the releases over b). At epsilon 1 on hashed rows no column then passed
it (the intercept's aside): their accuracy is main's, where without the gate
a few columns were capped on noise (every round, seeds 0 / 2: 0.5782 /
0.6050 -> 0.5798 / 0.6046).
The intercept column keeps lr: its curvature is c^2 mean(sigma') <= 1/16
(c = 0.5), lr h up to 4 at rounds of 2,000 and 10 at 5,000 (epsilon 1;
4-7 measured on hashed rows);
capping it cost plain hashed rows at epsilon 1 0.578 / 0.603 / 0.605 ->
0.570 / 0.575 / 0.581 (seeds 0-2; the averaged iterates absorb its
oscillation there), and with it kept the plain rows' accuracy at epsilon 1
is main's on every seed.

Privacy. dg_j is a function of the released prefix sums G_t, G_{t-1},
G_{t-2} and of dtheta_j; dtheta_j of the velocity v_{t-1} (a sum of released
increments) and of round t-1's rates, themselves functions of earlier
releases and public constants (lr, kappa, beta, ``DECAY``, ``GATE``, the
schedule of secant rounds, a function of t alone); the gate's bound is a
function of the mechanism's public noise schedule and b; rounding to float32
is a fixed function of those numbers. So lr_j, and theta_t, remain
post-processing of G_1..G_t with public constants, and the gradients of
round t+1 are still taken at a point fixed by G_1..G_t: the sensitivity
argument of :mod:`._momentum` (leaf sensitivity 2 L, adaptive inputs) is
unchanged and the rule costs no privacy. No row is read outside the leaf.

Cost. State: the sums num, den (two float32 (k, d) arrays), a reference to
G_{t-2} before a secant round, and the capped coordinates with their rates
(flat indices; a few hundred at most on hashed rows, one on a token's). The
arrays are replaced on a secant round, never written in place, so a
checkpoint (each call's transaction) shares them and no round copies them
(the first version copied four float64 (k, d) arrays on each call's first
round and kept a previous gradient and iterate). A secant round's
post-processing is one compiled pass
(:func:`~skdpol.online._momentum_kernel.momentum_step_secant`, ~2x the plain
round's); the other rounds take the plain pass with the few capped
coordinates recomputed after it
(:func:`~skdpol.online._momentum_kernel.momentum_step_capped`), or the plain
pass itself where none is capped. The numpy lines (:meth:`CurvatureCap.rates`)
are the reference: the kernels apply the same operations in the same order
(the same bits, tested).
"""

import numpy as np

from ._momentum_kernel import momentum_step, momentum_step_capped, momentum_step_secant

DECAY = 0.9  # the secant's least squares forget older secant rounds at this rate
GATE = 4.0  # a term counts where |dg| > GATE x the public bound on its noise std
# the secant rounds (``secant_round``): every round up to EVERY_ROUND_UNTIL, then
# one round in SECANT_EVERY (the module notes' "Cost")
EVERY_ROUND_UNTIL, SECANT_EVERY = 5, 8

__all__ = ["CurvatureCap", "DECAY", "GATE", "secant_round"]


def secant_round(t):
    """Whether round t (from 1) updates the secant (a public function of t)."""
    return t >= 2 and (t <= EVERY_ROUND_UNTIL or t % SECANT_EVERY == 0)


class CurvatureCap:
    """The secant state of one stream (module notes); ``kappa`` the cap on
    the estimated lr_j h_j, ``shape`` the stream's (k, d). Its arrays are
    replaced, never written in place: a checkpoint (a shallow copy) shares
    them safely, and no round copies them."""

    def __init__(self, kappa, shape):
        self.kappa = float(kappa)
        self._num = np.zeros(shape, np.float32)  # the secant's sums (float32)
        self._den = np.zeros(shape, np.float32)
        # G_{t-2} (the stream's release before its last) where round t is a
        # secant round (a reference: releases are replaced, never written)
        self._before_last = None
        self._previous_lr = None  # the scalar step of round t - 1
        # the capped coordinates (flat indices, sorted) and their rates, from the
        # last secant round (which took them) to the next
        self._capped = np.zeros(0, np.int64)
        self._rates = np.zeros(0)

    def rates(self, lr, released, last, v_prev, alpha, momentum, tree, t, rows, intercept):
        """Round t's learning rates (lr, or a (k, d) array) from its release
        ``released`` (G_t), the one before ``last`` (G_{t-1}), the velocity
        before it ``v_prev`` and the penalty ``alpha``: the numpy lines, the
        reference of :func:`~._momentum_kernel.momentum_step_capped` and
        :func:`~._momentum_kernel.momentum_step_secant`. Replaces this
        state's arrays, never writes them."""
        capped, rates = self._capped, self._rates  # the last secant round's
        before_last = self._before_last
        self._before_last = last if secant_round(t + 1) else None
        previous_lr, self._previous_lr = self._previous_lr, lr
        if before_last is None:  # not a secant round: the last one's rates
            return lr if not capped.size else _dense(lr, capped, rates, v_prev.shape)
        # the previous round's step theta_{t-1} - theta_{t-2} = -rate v_prev
        dtheta = -(_dense(previous_lr, capped, rates, v_prev.shape) * v_prev)
        # g_t - g_{t-1} = (G_t - 2 G_{t-1} + G_{t-2}) / b + alpha dtheta
        dg = (released - last) / rows - (last - before_last) / rows
        if alpha:
            dg += alpha * dtheta
        term = dg * dtheta
        gate = GATE * _noise_bound(tree, t, rows)
        if gate > 0.0:  # the noise gate (module notes)
            term = np.where(np.abs(dg) > gate, term, 0.0)
        # the sums kept as float32 (the notes' "Cost"), read back as stored
        num = (DECAY * self._num.astype(np.float64) + term).astype(np.float32)
        den = (DECAY * self._den.astype(np.float64) + dtheta * dtheta).astype(np.float32)
        self._num, self._den = num, den
        # kappa / h_j = kappa den_j / num_j where that is below lr (num_j > 0)
        num64, kd = num.astype(np.float64), self.kappa * den.astype(np.float64)
        bound = _bound(momentum)  # where lr h_j passes heavy ball's bound
        hits = (num64 > 0.0) & (bound * den.astype(np.float64) < lr * num64)
        if intercept:
            hits[:, -1] = False  # the intercept keeps lr (module notes)
        rate = np.where(hits, kd / np.where(hits, num64, 1.0), lr)
        self._capped, self._rates = _capped(hits, num, den, self.kappa)
        return rate

    def kernel_step(self, released, last, rows, alpha, momentum, lr, keep, rho, velocity,
                    theta, average, tree, t, intercept):
        """The round's post-processing with the cap, compiled (the same bits
        as :meth:`rates` and the stream's numpy lines), writing the stream's
        ``velocity``, ``theta`` and ``average`` (owned by the caller) in
        place and replacing this state's arrays."""
        before_last = self._before_last
        args = (released, last, rows, alpha, momentum, lr, keep, rho, velocity, theta, average)
        if before_last is None:  # the last secant round's rates
            if self._capped.size:
                momentum_step_capped(*args, self._capped, self._rates)
            else:  # (the same loop)
                momentum_step(*args)
        else:  # a secant round
            num = np.empty(theta.shape, np.float32)
            den = np.empty(theta.shape, np.float32)
            hits = np.empty(theta.shape, np.bool_)
            gate = GATE * _noise_bound(tree, t, rows)
            momentum_step_secant(*args, self._capped, self._rates, before_last, self._num,
                                 self._den, num, den, hits, self._previous_lr, DECAY, gate,
                                 self.kappa, _bound(momentum), bool(intercept))
            self._num, self._den = num, den
            self._capped, self._rates = _capped(hits, num, den, self.kappa)
        self._before_last = last if secant_round(t + 1) else None
        self._previous_lr = lr


def _capped(hits, num, den, kappa):
    """The capped coordinates (flat indices, sorted) and their rates kappa
    den / num (as the secant round's step took them) from its ``hits``."""
    capped = np.flatnonzero(hits)
    return capped, (kappa * den.reshape(-1)[capped].astype(np.float64)
                    / num.reshape(-1)[capped].astype(np.float64))


def _bound(momentum):
    """Heavy ball's bound on lr h, 2 (1 + beta): a coordinate is capped
    where its estimate passes it (module notes)."""
    return 2.0 * (1.0 + momentum)


def _dense(lr, capped, rates, shape):
    """The (k, d) rates: ``lr`` but ``rates`` at the flat indices ``capped``."""
    rate = np.full(shape, lr)
    rate.reshape(-1)[capped] = rates
    return rate


def _noise_bound(tree, t, rows):
    """A public bound on the noise std of (G_t - 2 G_{t-1} + G_{t-2}) / rows:
    (s_t + 2 s_{t-1} + s_{t-2}) / rows, s the prefix noise std (0 at
    epsilon = inf). An epoch mechanism knows only its current epoch's times:
    there the largest std it gives stands for the others."""
    times = [t, max(t - 1, 0), max(t - 2, 0)]
    try:
        s = np.asarray(tree.noise_std_at(times), dtype=float)
    except ValueError:
        s = np.full(3, float(np.max(tree.noise_std_at([t]))))
    return float(s[0] + 2.0 * s[1] + s[2]) / rows
