"""Noisy gradient descent on a Huber (clipped-residual) loss, round by round.

Not a seed algorithm: the standard private ERM method (noisy full-batch
gradient descent, Bassily, Smith & Thakurta 2014; Song, Chaudhuri & Sarwate
2013 for the per-step Gaussian), used where the seeds' one-release variants
pay for a label bound they do not need. The quadratic FTL of
:mod:`skdpol.online._ftl` releases the sums of y v, whose sensitivity grows
with the label bound M; a gradient step only releases the sum of the
*clipped residuals* r v, and the residuals of a fitted model are far smaller
than M. On friedman1 in feature space (``benchmarks/bench_kernel.py``) that
is the difference between R^2 ~ 0.75 and ~ 0.85 at epsilon = 1.

Round (rows v_1..v_b with ||v_i|| <= R, labels y_i), K steps from the
current model w (Nesterov momentum mu = 0.9, step s = 0.3 / (R^2 + alpha)):

    g(w) = (1 / b) [ sum_i clip(<w, v_i> - y_i, -C, C) v_i + Z_k ] + alpha w,
    Z_k ~ N(0, (m 2 C R)^2 I)  (L2-Laplace of scale m 2 C R for delta = 0).

clip(., -C, C) is the derivative of Huber's loss with threshold C, so this
is gradient descent on a convex, (R^2 + alpha)-smooth objective; a step
below 1 / (R^2 + alpha) with mu < 1 keeps the momentum iteration stable for
any data. The factor 0.3 was measured (friedman1 features, epsilon = 1):
against 1.0 it loses 0.01 of R^2 on ``fit`` and gains 0.04 on rounds of
5,000 rows, whose fewer rows carry relatively more noise.

Sensitivity (replace-one)
-------------------------
Each row's term has norm <= C R, so replacing one row moves the sum by at
most 2 C R at *any* w: every step is a Gaussian (or L2-Laplace) mechanism of
sensitivity 2 C R, adaptively composed K times (the next step's w is a
function of the previous noisy releases only). alpha w and the momentum are
post-processing.

Rounds are disjoint: a row takes part in the K steps of its own round only,
and every other round is a function of public releases and of rows that do
not differ. So a whole stream, however long, costs one round's K-fold
composition (the per-round mechanisms compose *in parallel*), and needs no
horizon. Every round has ``batch_size`` rows and the same K.

Steps per round
---------------
The noise on the mean gradient is m 2 C R / b per step and the multiplier
grows like sqrt(K) for a fixed budget, so the noise the iterate collects
grows like K / b. Rounds of b rows therefore take K = min(max_iter,
ceil(b / 50)) steps: measured on friedman1 features (D = 256, epsilon = 1),
rounds of 1,000 rows reach R^2 0.67 with 30 steps and diverge with 100;
rounds of 5,000 rows reach 0.83 with 100 steps and fall to 0.76 with 300.
The constant is public, so K is too.
"""

import math

import numpy as np
from dp_accounting import NoOpDpEvent, SelfComposedDpEvent

from ..accounting import gaussian_mu_for_budget
from ..mechanisms import DiscreteNoisePool
from ..mechanisms import HoldsNoiseSpec
from ..losses import HuberLoss, LogisticLoss, MultinomialLoss
from ._rounds import RoundBuffer

ROWS_PER_STEP = 50
LR_SCALE = 0.3

# The classifier's schedule (``gradient_schedule``): integrated step
# T = K lr / (1 - momentum) = SCHEDULE_C / nu, K clipped to [warmup_steps, MAX_STEPS].
SCHEDULE_C = 2.0
MIN_STEPS = 10
MAX_STEPS = 400
MOMENTUM = 0.9
# The classifier's losses take at least WARMUP_FACTOR / (1 - momentum) steps
# (``warmup_steps``): K = 10 left a momentum of 0.9 short of its nominal T.
WARMUP_FACTOR = 10.0
# The regressor's Huber loss takes T = HUBER_SCHEDULE_C / nu instead. T nu is
# the standard deviation, per coordinate of unit space, of the noise the
# iterate collects along a direction the loss does not curve (K steps of
# lr / (1 - mu) times a per-step noise of sqrt(K) nu: a random walk of
# K lr nu / (1 - mu) = T nu). With c = 2 that is 2 per coordinate, where a
# regression model's unit-space coefficients are O(1) and R^2 pays for every
# bit of it in squared error (a classifier only for the signs it flips); the
# Huber loss is also nearly flat wherever residuals pass the clip C, so few
# directions pull the noise back. With c = 2 (K capped at 400) the default
# fit scored below the test mean's R^2 = 0 on small tables: wine quality
# (3,918 rows) at epsilon 0.5 -0.425 [-0.616, 0.020] (5 seeds), diabetes
# (353 rows) at epsilon 1 -0.33 (median of 30 seeds).
# Measured (benchmarks/bench_huber_schedule.py, docs/benchmarks/huber_schedule.md;
# fit at epsilon 0.5 / 1 / 2, medians of 20 seeds):
#   c = 2:   diabetes -1.017 / -0.326 / 0.061, wine -0.220 / 0.183 / 0.247
#   c = 0.3: diabetes  0.036 /  0.255 / 0.381, wine  0.210 / 0.235 / 0.250
#   c = 0.4: diabetes  0.069 /  0.287 / 0.385, wine  0.197 / 0.225 / 0.251
#   c = 0.5: diabetes  0.140 /  0.288 / 0.398, wine  0.125 / 0.211 / 0.247
# The best c differs by table (wine 0.2-0.3, diabetes 0.5, King County the
# cap): the optimal T grows like log(1 / nu) / curvature, and the curvature
# is the data's, not public. c = 0.4 has the largest sum over these cells,
# is at or above c = 2 in every one, and keeps King County (17,290 rows)
# exactly as it was: from c ~ 0.33 its T passes the cap of MAX_STEPS steps
# at epsilon >= 0.5 (0.757 / 0.766 / 0.769 for every c >= 0.4), as every
# table of that size or more does.
HUBER_SCHEDULE_C = 0.4


def gradient_schedule(n_rows, epsilon, delta, loss, row_bound, momentum=MOMENTUM, alpha=0.0):
    """Steps K and step size of noisy GD on ``n_rows`` rows, from public quantities.

    With K steps of size lr and momentum mu the iterate integrates the
    gradient over a "time" T = K lr / (1 - mu). Noise on the mean gradient
    per step is m 2 L R / n with m ~ sqrt(K) / mu_GDP (Gaussian-DP
    composition), so the noise the iterate collects grows like T nu with
    nu = 2 L R / (mu_GDP(epsilon, delta) n), while the optimisation needs T
    large enough to converge. We take T = SCHEDULE_C / nu, the step
    lr = 1 / smoothness (the largest stable one) and K = T (1 - mu) / lr,
    clipped to [warmup_steps(mu), MAX_STEPS] for the classifier's losses
    ([MIN_STEPS, MAX_STEPS] for the others; lr shrinks to keep T when K
    is clipped from below, and from rest a momentum iteration needs
    ~ 1 / (1 - mu) steps to reach its nominal T: see :func:`warmup_steps`).
    SCHEDULE_C = 2 was measured on Adult with the public bins
    (``benchmarks/bench_noisy_gd.py``, n = 2,000-32,561, epsilon 0.5-2,
    with the old floor of 10 steps): c = 1 and c = 2 agree within 0.5
    point from 8,000 rows on, and c = 2 is 1-2.5 points better at 2,000;
    at 32,561 rows and epsilon = 1 it is within 0.1 point of the best fixed
    K swept (0.853). Everything here is public: n under replace-one
    neighbours, the bounds, (epsilon, delta).
    With an L2 penalty ``alpha`` the objective's smoothness is the loss's
    plus alpha, and so is the step's bound: a step of 1 / smoothness alone
    diverged from alpha ~ 0.6 on the logistic loss (rows of norm sqrt(2)),
    even without noise. The Huber loss (the regressor's) uses
    ``HUBER_SCHEDULE_C`` = 0.4 instead of 2: T nu is the noise per
    coordinate the iterate collects along flat directions, and R^2 pays for
    it in squared error (measured on wine quality, diabetes and King County;
    see the constant's comment).

    Returns
    -------
    n_steps : int
    learning_rate : float
    """
    lr_max = 1.0 / (loss.smoothness(row_bound) + alpha)
    if math.isinf(epsilon):
        return MAX_STEPS, lr_max
    nu = 2.0 * loss.lipschitz(row_bound, math.inf) / (
        gaussian_mu_for_budget(epsilon, delta) * n_rows)
    T = (HUBER_SCHEDULE_C if isinstance(loss, HuberLoss) else SCHEDULE_C) / nu
    # the classifier's losses only: the Huber loss's constant was measured
    # with MIN_STEPS, and other callers (the distributed SGD2's wrapped losses)
    # keep the schedule they were measured with
    floor = (warmup_steps(momentum) if isinstance(loss, (LogisticLoss, MultinomialLoss))
             else MIN_STEPS)
    n_steps = int(min(MAX_STEPS, max(floor, math.ceil(T * (1 - momentum) / lr_max))))
    return n_steps, min(lr_max, T * (1 - momentum) / n_steps)


def warmup_steps(momentum=MOMENTUM):
    """The classifier's least steps K: ``WARMUP_FACTOR / (1 - momentum)`` (100 at 0.9).

    T = K lr / (1 - mu) is the integrated step of a *steady* momentum
    iteration; from rest, K steps integrate only
    lr sum_k (1 - mu^k) / (1 - mu) = T (1 - mu (1 - mu^K) / (K (1 - mu))),
    so with mu = 0.9 the old floor of 10 steps realised 0.41 T and 100 steps
    realise 0.91 T. The floor binds on small tables (n below ~20,000 at
    epsilon 0.5, ~10,000 at epsilon 1), where T (1 - mu) / lr_max is a few
    steps: there the features, whose unit-space curvature is ~ p (1 - p) / d
    per coordinate against p (1 - p) for the constant column, had barely
    moved from 0 when the intercept had settled at the calibrated log-odds
    of the shrunken model, and a model whose margins spread less than that
    log-odds predicts the majority class. Breast cancer (455 rows, public
    ranges, epsilon 0.5, noiseless replica of this schedule): margins' sd
    0.32, accuracy 0.649 = majority with or *without* the noise (median of
    20 seeds). ``fit``'s accuracy at epsilon 0.5 / 1 by floor (medians of
    30 validation seeds, 100-129; majority 0.632): 10 -> 0.667 / 0.825,
    30 -> 0.781 / 0.873, 50 -> 0.807 / 0.829, 100 -> 0.794 / 0.860,
    150 -> 0.772 / 0.864, 300 -> 0.781 / 0.842: a plateau from ~ 3 / (1 - mu)
    on, 100 in its middle. The noise the iterate collects is still T nu
    (the K steps' multiplier is recalibrated for the larger K by the
    factory). Only momentum is read: public. It costs where the noise, not
    the optimisation, limits: on 1,000-row samples of Adult (800 training
    rows, the schema's one-hot blocks), which the old floor left near the
    majority class too, accuracy minus the majority's went from +0.007 /
    +0.015 to -0.016 / +0.005 at epsilon 0.5 / 1 (means of 20 validation
    seeds, 300-319; AUC ~ 0.71 -> 0.66 at epsilon 0.5, 40 seeds), while
    breast cancer gained +0.069 / +0.022 on the same seeds: the floor is
    the larger realised T, which one table needs and the other pays noise
    for, and nothing public tells them apart (the rows' offset from the
    origin, which makes breast cancer's features nearly collinear with the
    constant column, is not public). 100 has the largest sum over the four
    cells of floors 10, 20, 30, 50, 100. Only the logistic
    and multinomial losses take it: the Huber loss's HUBER_SCHEDULE_C was
    measured with ``MIN_STEPS``.
    """
    return int(round(WARMUP_FACTOR / (1.0 - momentum)))


def steps_per_round(batch_size, max_iter):
    """Gradient steps K of a round of ``batch_size`` rows (public)."""
    return int(min(max_iter, max(1, math.ceil(batch_size / ROWS_PER_STEP))))


def round_event(noise, n_steps):
    """Cost of one round (and so of a whole stream of disjoint rounds): its
    ``n_steps`` steps, each one release of ``noise`` (a NoiseSpec)."""
    if noise.noiseless:
        return NoOpDpEvent()
    return SelfComposedDpEvent(noise.event(), n_steps)


class NoisyGradientDescent(HoldsNoiseSpec, RoundBuffer):
    """Rounds of noisy Nesterov gradient descent on a loss with bounded derivative.

    Parameters
    ----------
    n_features : int
        Length of the (already clipped or normalised) rows.
    row_bound : float
        R: every row has ||v|| <= R (the caller enforces it).
    alpha : float
        Ridge weight (the objective is the mean loss + alpha ||W||^2 / 2).
    batch_size : int
        Rows per round.
    horizon : int or None
        Rounds allowed (None: unbounded; the cost does not grow with rounds).
    max_iter : int
        Upper bound on the steps per round (see :func:`steps_per_round`).
    noise : NoiseSpec
        Family, sampler and multiplier of the per-step noise (multiplier over
        the step's sensitivity; 0: no noise).
    rng : numpy.random.Generator
    momentum : float, default=0.9
    residual_bound : float or None, default=None
        C of the Huber loss used when ``loss`` is None (the kernel model's
        clipped residuals); give one of ``residual_bound`` and ``loss``.
    loss : loss object of :mod:`skdpol.losses` or None, default=None
        Any loss whose derivative norm is bounded whatever W (``lipschitz(R,
        inf)`` finite): logistic, multinomial (W of shape (k, d)), hinge,
        Huber. The squared loss is refused (its gradient is unbounded).
    n_steps : int or None, default=None
        Steps per round; None uses :func:`steps_per_round` (``max_iter``
        caps both).
    learning_rate : float or None, default=None
        None: 0.3 / (smoothness of the loss + alpha).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.mechanisms import NoiseSpec
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(5000, 3)); X /= np.linalg.norm(X, axis=1, keepdims=True)
    >>> y = X @ np.array([1.0, -2.0, 0.5])
    >>> gd = NoisyGradientDescent(n_features=3, row_bound=1.0, residual_bound=1.0,
    ...                           alpha=0.0, batch_size=5000, horizon=None, max_iter=100,
    ...                           noise=NoiseSpec(), rng=rng)
    >>> gd.learn(X, y)
    >>> np.round(gd.published, 2)
    array([[ 1. , -2. ,  0.5]])
    """

    def __init__(self, *, n_features, row_bound, alpha, batch_size, horizon, max_iter,
                 noise, rng, momentum=0.9,
                 residual_bound=None, loss=None, n_steps=None, learning_rate=None):
        if (loss is None) == (residual_bound is None):
            raise ValueError("give exactly one of loss and residual_bound.")
        self.loss = HuberLoss(residual_bound) if loss is None else loss
        super().__init__(n_features=n_features, n_outputs=self.loss.n_outputs,
                         batch_size=batch_size, horizon=horizon)
        self.row_bound = float(row_bound)
        self.residual_bound = None if residual_bound is None else float(residual_bound)
        if not math.isfinite(self.loss.lipschitz(self.row_bound, math.inf)):
            raise ValueError(
                f"{type(self.loss).__name__}'s gradient is not bounded: noisy gradient "
                "descent needs a loss with a bounded derivative (e.g. Huber)."
            )
        self.alpha = float(alpha)
        self.n_steps = (steps_per_round(self.batch_size, max_iter) if n_steps is None
                        else int(min(max_iter, max(1, n_steps))))
        self._spec = noise
        self.momentum = float(momentum)
        self.lr = (LR_SCALE / (self.loss.smoothness(self.row_bound) + self.alpha)
                   if learning_rate is None else float(learning_rate))
        self._rng = rng
        self.W = np.zeros((self.n_outputs, self.n_features))

    @property
    def sensitivity(self):
        """Replace-one L2 sensitivity of one step's gradient sum: 2 L R.

        L bounds ||l'(s, y)|| for every margin s and label y (C for Huber, 1
        logistic, sqrt(2) multinomial), so a row's term l'(s, y) v^T has
        Frobenius norm <= L R at any W, and a replaced row moves the sum by
        at most 2 L R (``loss.lipschitz(R, inf)`` is L R).
        """
        return 2.0 * self.loss.lipschitz(self.row_bound, math.inf)

    @property
    def published(self):
        return self.W

    def _publish(self):
        pass  # the iterate after a round *is* the release: every step was noised

    def event(self, n_rounds=None):
        """Cost of everything released once ``n_rounds`` rounds are complete
        (default: now): one round (rounds are disjoint)."""
        if (self.n_rounds if n_rounds is None else n_rounds) == 0:
            return NoOpDpEvent()
        return round_event(self._spec, self.n_steps)

    def _gradient_sum(self, W, X, y):
        """sum_i l'(W v_i, y_i) v_i^T, shape (k, d)."""
        # k = 1 (the kernel's hot path): the loss's matrix-vector products
        # through np.dot, the same gemv calls as X @ w and X.T @ d
        return self.loss.gradient(W, X, y)

    def _round(self, X, y):
        b, mu = X.shape[0], self.momentum
        W, V = self.W.copy(), np.zeros_like(self.W)
        pool = None
        if self._spec.discrete and not self._spec.noiseless:
            # the K steps' noise does not depend on the iterates: one exact draw
            pool = DiscreteNoisePool(count=self.n_steps, dim=W.size,
                                     sensitivity=self.sensitivity,
                                     multiplier=self.noise_multiplier, noise=self._spec.family,
                                     rng=self._rng)
        for _ in range(self.n_steps):
            ahead = W + mu * V
            total = self._spec.perturb(self._gradient_sum(ahead, X, y), self.sensitivity,
                                       self._rng, pool=pool)
            V = mu * V - self.lr * (total / b + self.alpha * ahead)
            W = W + V
        self.W = W
