"""Implicit gradient descent (IGD) and projected gradient descent (GIGA).

Both are the *non-private* algorithms of seed 002 §3.3-3.4; their iterates
are curator state and :class:`~skdpol.online.OutputPerturbation` publishes
noisy copies of them. What makes that private is the sensitivity bound
``sensitivity()`` of the current iterate, derived below for replace-one
neighbours (one row replaced, so one round's mean loss changes by one row
out of b: its gradient moves by at most 2 L / b, L the per-row gradient bound
of :mod:`skdpol.losses` over the ball C of radius ``radius``).

IGD (round t = 1, 2, ...)
-------------------------
Round t's loss is f_t(W) = mean_i l(W v_i) + (a_t / 2) ||W - W_0||^2 with
a_t = alpha ("strong", seed 002 §3.3) or alpha / sqrt(t) ("decaying", the
non-strongly-convex variant of §4.1, W_0 a random point of C). With
A_0 = alpha and A_t = A_{t-1} + a_t the step is eta_t = 1 / A_{t-1} and

    W_{t+1} = Pi_C(prox_{eta_t f_t}(W_t)) = Pi_C(prox_{e_t lbar}(Z_t)),
    Z_t = c_t W_t + (1 - c_t) W_0, c_t = A_{t-1} / A_t, e_t = 1 / A_t.

(For "strong": A_t = alpha (t + 1), eta_t = 1 / (alpha t), the seed's step.)
Two facts bound the sensitivity:

* the prox of a convex function is 1-Lipschitz and Pi_C too, so a
  difference in W_t shrinks by c_t;
* for the same Z and two mean losses whose gradients differ by at most
  2 L / b at every point, the prox outputs differ by at most e_t 2 L / b
  (take the inner product of the two optimality conditions).

A row replaced in round s therefore moves W_{s+1} by <= 2 L / (b A_s), and
every later round multiplies that by A_{t-1} / A_t; the product telescopes:

    ||W_{t+1} - W'_{t+1}|| <= 2 L / (b A_t)   for every s <= t.

For "strong" that is 2 L / (b alpha (t + 1)), the seed's Lemma 4 (which
states 2L/t). The prox is solved to a certified accuracy
tol_t = tau * 2 L e_t / (b sqrt(t)) (:mod:`skdpol.online._prox`). The error
delta_t of the computed iterate against the exact one follows
delta_{t+1} <= c_t delta_t + tol_t; with D_t = A_t delta_{t+1} that is
D_t <= D_{t-1} + tau 2 L / (b sqrt(t)), so

    delta_{t+1} <= tau (2 L / b) (sum_{s <= t} s^-1/2) / A_t
                <= tau (2 L / b) (2 sqrt(t) - 1) / A_t

for either stream: the errors do *not* telescope away (an earlier version
used tol_t without the 1/sqrt(t) and claimed (1 + 2 tau); the accumulated
error was t tau). ``sensitivity()`` returns
(1 + 2 tau (2 sqrt(t) - 1)) 2 L / (b A_t) with tau = 1e-6: 1.002 times the
exact bound at t = 1e6 rounds, while the per-round tolerance only tightens
like 1/sqrt(t). L must hold at the prox output: the logistic, multinomial
and hinge derivatives are bounded everywhere; the squared loss's margin at
the one-row prox output is a convex combination of the margin at Z (in C)
and the label, so |s - y| <= R B + M, but for several rows no such bound
holds, so the squared loss needs ``batch_size=1``.

GIGA (round t)
--------------
f_t(W) = mean_i l(W v_i) + alpha/2 ||W||^2 is alpha-strongly convex and
beta-smooth, beta = alpha + smoothness(l). The gradient step
W -> W - eta grad f_t(W) is a contraction with factor
max(|1 - eta alpha|, |1 - eta beta|); with the seed's eta_t = 2 / (alpha t)
that is <= (t - 1) / t as soon as t >= t_q = ceil(beta / alpha + 1/2).
The seed publishes random points of C for the first t_q - 1 rounds (their
rows are not used) and starts GIGA from one at round t_q. A row of round
s >= t_q moves W_{s+1} by eta_s 2 L / b = 4 L / (alpha b s), and the rounds
s+1..t contract it by prod (r - 1) / r = s / t:

    ||W_{t+1} - W'_{t+1}|| <= 4 L / (alpha b t).

(The seed's Lemma 5 states 2G / (alpha t) and t_q = 2 L_G^2 / alpha^2; its
first case drops the factor 2 of eta_t = 2 / (alpha t), and the contraction
argument above needs a t_q linear, not quadratic, in beta / alpha.)
"""

import math

import numpy as np

from ..losses import SquaredLoss
from ._prox import implicit_step
from ._rounds import RoundBuffer, project_ball, uniform_in_ball

PROX_TOLERANCE = 1e-6


class ImplicitGD(RoundBuffer):
    """Implicit (proximal) gradient descent over the ball C, seed 002 §3.3.

    Parameters
    ----------
    loss : skdpol.losses loss
    n_features : int
    radius : float
        Radius B of C (Frobenius ball).
    alpha : float
        Strong convexity weight of the regulariser.
    row_bound : float
        Norm bound of the (clipped) rows.
    batch_size : int
    horizon : int or None
        Rounds planned (None: unbounded).
    schedule : {"strong", "decaying"}
        Regulariser weight alpha, or alpha / sqrt(t) around a random point.
    rng : numpy.random.Generator or None
        Only used by "decaying", to draw the centre W_0.
    """

    def __init__(self, *, loss, n_features, radius, alpha, row_bound, batch_size=1,
                 horizon=None, schedule="strong", rng=None):
        super().__init__(n_features=n_features, n_outputs=loss.n_outputs,
                         batch_size=batch_size, horizon=horizon)
        if batch_size > 1 and isinstance(loss, SquaredLoss):
            raise ValueError(
                "algorithm='igd' with the squared loss needs batch_size=1: the "
                "gradient bound of its implicit step holds for one row per round."
            )
        if schedule not in ("strong", "decaying"):
            raise ValueError(f"schedule must be 'strong' or 'decaying', got {schedule!r}.")
        self.loss = loss
        self.radius = float(radius)
        self.alpha = float(alpha)
        self.schedule = schedule
        self.lipschitz = loss.lipschitz(row_bound, radius)
        shape = (self.n_outputs, self.n_features)
        if schedule == "decaying":
            self.centre = uniform_in_ball(rng, shape, self.radius)
        else:
            self.centre = np.zeros(shape)
        self.W = self.centre.copy()
        self._A = self.alpha
        self.free_rounds = 0  # rounds whose iterate does not depend on the data

    @property
    def published(self):
        return self.W

    def _round(self, X, y):
        t = self.n_rounds + 1
        a_t = self.alpha if self.schedule == "strong" else self.alpha / math.sqrt(t)
        A_new = self._A + a_t
        c = self._A / A_new
        Z = c * self.W + (1.0 - c) * self.centre
        e = 1.0 / A_new
        tol = PROX_TOLERANCE * 2.0 * self.lipschitz * e / (X.shape[0] * math.sqrt(t))
        self.W = project_ball(implicit_step(self.loss, Z, X, y, e, tol), self.radius)
        self._A = A_new

    def _publish(self):
        pass

    def sensitivity(self, A=None):
        """Replace-one sensitivity of the current iterate (0 before any round)."""
        if self.n_rounds == 0:
            return 0.0
        A = self._A if A is None else A
        solver = 2.0 * PROX_TOLERANCE * (2.0 * math.sqrt(self.n_rounds) - 1.0)
        return (1.0 + solver) * 2.0 * self.lipschitz / (self.batch_size * A)


class ProjectedGD(RoundBuffer):
    """Projected gradient descent with eta_t = 2 / (alpha t) and warm-up, seed 002 §3.4.

    Parameters are those of :class:`ImplicitGD` (without ``schedule``); the
    loss must be smooth. ``rng`` draws the warm-up points.
    """

    def __init__(self, *, loss, n_features, radius, alpha, row_bound, batch_size=1,
                 horizon=None, rng):
        super().__init__(n_features=n_features, n_outputs=loss.n_outputs,
                         batch_size=batch_size, horizon=horizon)
        if not loss.smooth:
            raise ValueError("algorithm='giga' needs a smooth loss (not hinge).")
        self.loss = loss
        self.radius = float(radius)
        self.alpha = float(alpha)
        self.lipschitz = loss.lipschitz(row_bound, radius)
        beta = self.alpha + loss.smoothness(row_bound)
        self.warm_up = math.ceil(beta / self.alpha + 0.5)
        self.free_rounds = self.warm_up - 1
        self._rng = rng
        self.W = uniform_in_ball(rng, (self.n_outputs, self.n_features), self.radius)

    @property
    def published(self):
        return self.W

    def _round(self, X, y):
        t = self.n_rounds + 1
        if t < self.warm_up:  # a fresh random point; the round's rows are not used
            self.W = uniform_in_ball(self._rng, self.W.shape, self.radius)
            return
        grad = self.loss.gradient(self.W, X, y) / X.shape[0] + self.alpha * self.W
        self.W = project_ball(self.W - (2.0 / (self.alpha * t)) * grad, self.radius)

    def _publish(self):
        pass

    def sensitivity(self):
        """Replace-one sensitivity of the current iterate (0 during warm-up)."""
        t = self.n_rounds
        if t < self.warm_up:
            return 0.0
        return 4.0 * self.lipschitz / (self.alpha * self.batch_size * t)
