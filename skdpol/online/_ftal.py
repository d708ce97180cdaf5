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
"""

import numpy as np

from ..mechanisms import prefix_sum_mechanism
from ._rounds import RoundBuffer, project_ball


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
    """

    def __init__(self, *, loss, n_features, radius, alpha, row_bound, batch_size=1,
                 horizon=None, noise, rng, centre="origin", mechanism="tree"):
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
        self.W = np.zeros((self.n_outputs, self.n_features))
        self._weighted_models = np.zeros_like(self.W)  # sum of b W_tau (public)

    @property
    def published(self):
        return self.W

    def _round(self, X, y):
        self._tree.add(self.loss.gradient(self.W, X, y).ravel(), 1)
        n_rows = (self.n_rounds + 1) * self.batch_size
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
