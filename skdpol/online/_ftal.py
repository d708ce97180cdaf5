"""Private Follow-the-Approximate-Leader (seed 001's PFTAL; "DP-FTRL").

Round t's loss f_t(W) = mean-free sum over its b rows of
l(W v) + alpha/2 ||W||^2 is alpha-strongly convex per row, so it lies above
the quadratic <g, W> + (alpha/2) ||W - W_t||^2 around the published point
W_t (g its gradient there). Following the leader of those surrogates over
all n rows seen gives

    W_{t+1} = Pi_C(mean of the W_tau - G_t / (alpha n)) = Pi_C(-S_t / (alpha n)),

G_t the sum of the surrogate gradients g = grad l + alpha W_tau and S_t the
sum of the loss gradients grad l(W_tau; v) alone (the alpha W_tau terms
cancel the mean). The W_tau are published already, so only S_t needs
privacy: it comes from the tree of private prefix sums. One row moves one
leaf by at most 2 L (two gradients of norm <= L at the same public point),
and lies in one node per level; the tree's event is the whole cost, for
every round's model together.

``centre="published"`` (estimator ``algorithm="ftrl"``) drops the penalty
from the loss and keeps the quadratics around the published models: the
leader of sum_tau <grad l(W_tau), W> + (alpha/2) ||W - W_tau||^2 is

    W_{t+1} = Pi_C(mean of the W_tau - S_t / (alpha n)),

FTRL-Proximal with linearised losses (McMahan 2011). Same tree, same
sensitivity, same noise (the W_tau are public); but its fixed point is the
*unpenalised* optimum (where the mean gradient vanishes), so alpha no longer
biases the model towards zero; it only sets the step size 1 / (alpha n).
Its regret is not covered by the strongly convex analysis (the loss is not
alpha-strongly convex); it is measured instead (docs/algorithms/ftal.md).

The regressor's "ftrl" (``initial > 0``)
----------------------------------------
On the squared loss the sums above are unusable: L grows like
1 / sqrt(alpha) with the ball, and the first step 1 / (alpha b) is far beyond
what the loss's curvature allows, so the models blew up (R^2 of -2,000 to
-37,000 on King County and wine, docs/benchmarks/stream.md). The regressor's
"ftrl" therefore runs, as "ftrl-momentum" does (:mod:`._momentum`), on Huber's
loss with the residual clipped at ``residual_bound`` = tau, and adds an
initial regulariser (sigma_0 / 2) ||W||^2 at the origin to the quadratics:

    W_{t+1} = argmin <S_t, W> + (sigma_0 / 2) ||W||^2
                     + sum_tau (alpha b_tau / 2) ||W - W_tau||^2
            = (alpha sum_tau b_tau W_tau - S_t) / (sigma_0 + alpha n),

no ball (radius inf: the gradients are bounded everywhere). Without noise,
consecutive solutions differ by W_{t+1} = W_t - g_t / (sigma_0 + alpha n_t),
g_t round t's gradient sum: a gradient step on the round's mean loss of size
b / (sigma_0 + alpha n_t) <= b / sigma_0. With sigma_0 = b R^2 / 2
(``INITIAL_CURVATURE`` = 1/2 times b R^2) that is at most 2 / R^2, the largest
step for which a gradient step on a convex loss of curvature <= R^2 (Huber's
in unit space: |l''| <= 1 and ||v||^2 <= R^2) is non-expansive, so no
direction is amplified from the first round on. The step is public (b, R) and
scale-free: unit space divides rows by ``data_norm`` and labels by ``y_bound``.
The published model is the average avg_t = (1 - rho_t) avg_{t-1} + rho_t W_t,
rho_t = min(1, 1 / (tail t)) (``TAIL`` = 0.3: recent iterates weigh most),
which averages the prefix sums' noise down.

*Sensitivity (replace-one).* A row's gradient is clip(s - y, -tau, tau) v with
||v|| <= R, so its norm is at most L = tau R (``HuberLoss.lipschitz``) for
every W and label. W_t is a function of the releases S_1..S_{t-1} and public
numbers, so the gradients of round t are taken at the same point in both
neighbouring streams (adaptive inputs, covered by the tree's and the BLT's
guarantee); the replaced row lies in one leaf and moves it by <= 2 L: the
mechanism's event with leaf sensitivity 2 L is the whole cost, as above.
Everything after the release (the division, the weighted models, the
average) is post-processing with public numbers (b, R, alpha, sigma_0, tail).
"""

import numpy as np

from ..mechanisms import prefix_sum_mechanism
from ._rounds import RoundBuffer, project_ball

# the regressor's "ftrl" (module notes): sigma_0 = INITIAL_CURVATURE b R^2 (the
# step on a round's mean <= 2 / R^2), and the published average's tail. Measured
# on King County and wine, one pass at epsilon 1 and inf, 2 seeds, rounds of 20:
# 0.5 and 0.3 were the best of {0.25, 0.5, 1} x {0.7, 0.3, 0.15}; 1 (step 1 / R^2)
# lost 0.03 of R^2 on both tables, no averaging 0.03-0.07
INITIAL_CURVATURE = 0.5
TAIL = 0.3


class PrivateFTAL(RoundBuffer):
    """Private FTAL over the ball C with tree-aggregated gradients.

    Parameters
    ----------
    loss : skdpol.losses loss
    n_features : int
    radius : float
        Radius of C; ``loss.lipschitz(row_bound, radius)`` bounds a gradient.
    alpha : float
    row_bound : float
    batch_size : int
    horizon : int or None
        Rounds (tree leaves) planned.
    noise : NoiseSpec
        Family, sampler and multiplier of the tree node noise (multiplier in
        units of the leaf sensitivity 2 L; see :class:`~skdpol.mechanisms.NoiseSpec`).
    rng : numpy.random.Generator
    centre : {"origin", "published"}
        Where the quadratic surrogates are centred: PFTAL on the penalised
        loss ("origin", the seed), or FTRL-Proximal ("published").
    mechanism : {"tree", "blt"}, default="tree"
        How the prefix sums are released: the binary tree of the seeds, or a
        BLT factorisation (:class:`~skdpol.mechanisms.BLTPrefixSum`, a known
        horizon only; ~2.6x less noise at 10^4 rounds).
    initial : float, default=0.0
        sigma_0, the weight of an initial regulariser (sigma_0 / 2) ||W||^2
        (``centre="published"`` only); > 0 also publishes the average of
        the iterates (the regressor's "ftrl", module notes). 0: the seeds'
        updates, unchanged.
    """

    def __init__(self, *, loss, n_features, radius, alpha, row_bound, batch_size=1,
                 horizon=None, noise, rng, centre="origin", mechanism="tree", initial=0.0):
        super().__init__(n_features=n_features, n_outputs=loss.n_outputs,
                         batch_size=batch_size, horizon=horizon)
        self.loss = loss
        self.radius = float(radius)
        self.alpha = float(alpha)
        self.lipschitz = loss.lipschitz(row_bound, radius)
        self._tree = prefix_sum_mechanism(
            mechanism, dim=self.n_outputs * self.n_features, sensitivity=2.0 * self.lipschitz,
            noise=noise, horizon=horizon, rng=rng,
            # a leaf sums batch_size gradients of norm <= lipschitz
            leaf_bound=self.batch_size * self.lipschitz,
        )
        if centre not in ("origin", "published"):
            raise ValueError(f"centre must be 'origin' or 'published', got {centre!r}.")
        self.centre = centre
        self.initial = float(initial)
        if self.initial and centre != "published":
            raise ValueError("initial > 0 is defined for centre='published' only.")
        self.W = np.zeros((self.n_outputs, self.n_features))
        self._weighted_models = np.zeros_like(self.W)  # sum of b W_tau (public)
        self._average = np.zeros_like(self.W)  # published when initial > 0

    @property
    def published(self):
        return self._average if self.initial else self.W

    def _round(self, X, y):
        self._tree.add(self.loss.gradient(self.W, X, y).ravel(), 1)
        n_rows = (self.n_rounds + 1) * self.batch_size
        if self.initial:  # the regressor's "ftrl" (module notes); a separate
            # branch so that the seeds' updates keep their exact arithmetic
            self._weighted_models += X.shape[0] * self.W
            released = self._tree.release().reshape(self.W.shape)
            self.W = project_ball((self.alpha * self._weighted_models - released)
                                  / (self.initial + self.alpha * n_rows), self.radius)
            rho = min(1.0, 1.0 / (TAIL * (self.n_rounds + 1)))
            self._average = (1.0 - rho) * self._average + rho * self.W
            return
        # -S / c as S / -c: negation is exact and division rounds
        # symmetrically, so the values are the same, with one ufunc call less
        step = self._tree.release().reshape(self.W.shape) / -(self.alpha * n_rows)
        if self.centre == "published":
            self._weighted_models += X.shape[0] * self.W
            step += self._weighted_models / n_rows
        self.W = project_ball(step, self.radius)

    def _publish(self):
        pass

    def event(self, n_rounds=None):
        """Cost of every release once ``n_rounds`` rounds are complete (default: now)."""
        return self._tree.event(self.n_rounds if n_rounds is None else n_rounds)
