"""Private Follow-the-Approximate-Leader over the cube (seed 001's SubmodPFTAL).

Round t's loss is the regularised Lovasz extension f_L,t(x) + (alpha/2)||x||^2
over C = [0, 1]^n, alpha-strongly convex; it lies above the quadratic
<g_t + alpha x_t, x> + (alpha/2)||x - x_t||^2 around the published x_t (g_t a
Lovasz subgradient). Following the leader of those surrogates,

    x_{t+1} = Pi_C(mean(x_1..x_t) - G_t / (alpha t)) = clip(-S_t / (alpha t), 0, 1),

G_t the sum of the surrogate gradients g_tau + alpha x_tau and S_t the sum of
the g_tau alone: the alpha x_tau cancel the mean, as in
:class:`~skdpol.online.PrivateFTAL`. The objective (alpha t / 2)||x + S_t /
(alpha t)||^2 is an isotropic quadratic, so projecting onto the box is a
coordinatewise clip. Only S_t needs privacy; it comes from a tree of private
prefix sums, every x_t and every played set is post-processing of it (plus
curator coins that never depend on the data).

Leaf sensitivity (replace-one, one leaf per round, b rows per round)
--------------------------------------------------------------------
``leaf_bound="range"`` (any cost, values clipped to [-B, B]): for submodular
f with |f| <= B and the increments g of a chain, let T be the items with
g_i > 0; diminishing returns gives g_i <= f(T_{<i} + i) - f(T_{<i}), so the
positive mass is P <= f(T) - f({}) <= 2B; the total is f(V) - f({}), so
||g||_1 = 2P - f(V) + f({}) <= 2f(T) - f({}) - f(V) <= 4B; each |g_i| <= 2B;
hence ||g||_2^2 <= ||g||_inf ||g||_1 <= 8B^2, ||g||_2 <= 2 sqrt(2) B (attained:
f = (-B, B, -B) on the chain {}, {1}, {1, 2}, f({2}) = -B). The bound uses f off
the chain, so it needs f submodular after clipping; to hold for *any* input
the leaf is projected onto the L2 ball of radius R = 2 sqrt(2) B (a no-op for
submodular costs in range), and the sensitivity is 2R / b = 4 sqrt(2) B / b
(exact for arbitrary inputs: f and -f; over submodular pairs the supremum
found by linear programming for n <= 5 is sqrt(24) B, 0.87 of it).

``leaf_bound="modular"`` (built-in costs, :mod:`._costs`): f = h + <m(r), 1_S>
with h public, so g = dh_L(x_t) + m(r); neighbours differ by m(r) - m(r'),
and m is projected onto its declared L2 ball: sensitivity 2 ||m||_max / b.

Bandit (``feedback="bandit"``): the set and the sign coin are drawn by the
curator independently of f_t, so neighbours share them; the leaf is
c v / rho_i e_j with c <= 2, v the clipped (mean) cost and
rho_i >= mu / (n + 1): ||leaf|| <= 2B (n + 1) / mu, sensitivity 4B (n + 1) / (mu b).
"""

import numpy as np

from ..mechanisms._prefix import prefix_sum_mechanism
from ..online._rounds import RoundBuffer
from ..utils._validation import clip_rows
from ._lovasz import (bandit_gradient, bandit_sample, check_cost_value,
                      lovasz_subgradient, threshold_round)

__all__ = ["SubmodularPFTAL", "bandit_leaf_bound", "range_leaf_bound"]


def range_leaf_bound(cost_bound):
    """L2 bound 2 sqrt(2) B on a Lovasz subgradient of a submodular |f| <= B."""
    return 2.0 * np.sqrt(2.0) * cost_bound


def bandit_leaf_bound(cost_bound, n_items, mu):
    """L2 bound 2 B (n + 1) / mu on the one-point bandit estimate."""
    return 2.0 * cost_bound * (n_items + 1) / mu


class SubmodularPFTAL(RoundBuffer):
    """Private online submodular minimisation by FTAL over [0, 1]^n.

    Parameters
    ----------
    n_items : int
    cost : callable or None
        ``cost(masks, row) -> values`` (batched over masks), used by
        :meth:`learn`; None for :meth:`ask` / :meth:`tell` use only.
    cost_bound : float or None
        Costs are clipped to [-cost_bound, cost_bound]; None takes
        ``cost.bound(n_items)`` (built-in costs).
    alpha : float
        Strong-convexity weight; the step is 1 / (alpha t).
    noise_multiplier : float
        Tree node noise in units of the leaf sensitivity.
    feedback : {"full", "bandit"}
    mu : float, default=0.1
        Bandit exploration in (0, 1].
    batch_size : int, default=1
        Rows per round; the round's cost is their mean.
    horizon : int or None
    noise : {"gaussian", "laplace"}
    rng : numpy.random.Generator
    sampler : {"discrete", "float"}, default="discrete"
    leaf_bound : {"auto", "range", "modular"}
        "auto" is "modular" for full information with a built-in cost
        (one with ``public`` and ``modular`` parts), "range" otherwise.
    mechanism : {"tree", "blt"}, default="tree"
        The prefix sums' release: the seeds' binary tree, or a BLT
        factorisation (Gaussian noise only; see
        :func:`skdpol.mechanisms._prefix.prefix_sum_mechanism`).

    Attributes
    ----------
    x : ndarray (n,)
        The published point x_t for the coming round.
    selected : ndarray of bool (n,)
        The set to play in the coming round (drawn from x_t).
    sensitivity : float
        Replace-one L2 sensitivity of one leaf.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import ConcaveMassCost, SubmodularPFTAL
    >>> rng = np.random.default_rng(0)
    >>> learner = SubmodularPFTAL(n_items=3, cost=ConcaveMassCost(), alpha=0.2,
    ...                           noise_multiplier=0.0, rng=rng)
    >>> learner.learn(np.tile([1.0, -1.0, 1.0], (50, 1)))
    >>> learner.x.tolist(), learner.selected.tolist()
    ([1.0, 0.0, 1.0], [True, False, True])
    """

    def __init__(self, *, n_items, cost=None, cost_bound=None, alpha, noise_multiplier,
                 feedback="full", mu=0.1, batch_size=1, horizon=None, noise="gaussian",
                 rng, sampler="discrete", leaf_bound="auto", mechanism="tree"):
        super().__init__(n_features=n_items, n_outputs=1, batch_size=batch_size,
                         horizon=horizon)
        if feedback not in ("full", "bandit"):
            raise ValueError(f"feedback must be 'full' or 'bandit', got {feedback!r}.")
        if feedback == "bandit" and not 0.0 < mu <= 1.0:
            raise ValueError(f"mu must be in (0, 1], got {mu!r}.")
        if not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}.")
        if cost_bound is None:
            if not hasattr(cost, "bound"):
                raise ValueError("cost_bound is required unless cost has a bound(n) method.")
            cost_bound = cost.bound(n_items)
        if not cost_bound > 0:
            raise ValueError(f"cost_bound must be > 0, got {cost_bound!r}.")
        structured = hasattr(cost, "public") and hasattr(cost, "modular")
        if leaf_bound == "auto":
            leaf_bound = "modular" if structured and feedback == "full" else "range"
        if leaf_bound not in ("range", "modular"):
            raise ValueError(
                f"leaf_bound must be 'auto', 'range' or 'modular', got {leaf_bound!r}.")
        if leaf_bound == "modular" and not (structured and feedback == "full"):
            raise ValueError("leaf_bound='modular' needs full information and a cost "
                             "with public and modular parts.")
        self.cost, self.cost_bound, self.alpha = cost, float(cost_bound), float(alpha)
        self.feedback, self.mu, self.leaf_bound = feedback, float(mu), leaf_bound
        if feedback == "bandit":
            self.leaf_norm = bandit_leaf_bound(self.cost_bound, n_items, self.mu)
        elif leaf_bound == "modular":
            self.leaf_norm = float(cost.modular_norm(n_items))
        else:
            self.leaf_norm = range_leaf_bound(self.cost_bound)
        self.sensitivity = 2.0 * self.leaf_norm / self.batch_size
        self._rng = rng
        # a round's leaf is the mean of its rows' leaves, each of L2 norm <=
        # leaf_norm: its coordinates lie in [-leaf_norm, leaf_norm] (the BLT's
        # grid bound; the sensitivity 2 leaf_norm / batch_size is smaller)
        self._tree = prefix_sum_mechanism(
            mechanism, dim=self.n_features, sensitivity=self.sensitivity,
            noise_multiplier=noise_multiplier, horizon=horizon, noise=noise, rng=rng,
            sampler=sampler, leaf_bound=self.leaf_norm)
        self.x = np.zeros(self.n_features)  # argmin of the regulariser alone
        self._live = ()  # feedback of the current round's visitors (secret until it completes)
        self._draw_set()

    # -------------------------------------------------------------- playing
    @property
    def published(self):
        return self.x[None, :]

    def _publish(self):
        pass

    def _draw_set(self):
        # the coming round's set: curator coins only, never the data
        if self.feedback == "full":
            self.selected = threshold_round(self.x, self._rng)
        else:
            i, self.selected, rho_i, order, _ = bandit_sample(self.x, self.mu, self._rng)
            self._pending = (i, rho_i, order)

    def ask(self):
        """The set to play in the coming round (a copy)."""
        return self.selected.copy()

    def tell(self, feedback):
        """Learn one visitor's feedback on the set :meth:`ask` gave.

        ``feedback`` is the observed cost f(S_t) (bandit) or a batch
        callable ``masks -> values`` for the visitor's cost (full
        information with ``leaf_bound="range"``). A round is ``batch_size``
        visitors who all play the round's set: their feedback waits
        (exactly, as curator state) and the round's leaf is built from its
        mean when the last of them reports, as :meth:`learn` does for rows;
        the published point and set change only then. Invalid feedback
        raises ``ValueError`` before any state changes.
        """
        completes = len(self._live) + 1 == self.batch_size
        if completes:
            self.check_room(self.batch_size - self._pending_X.shape[0])
        if self.feedback == "bandit":
            item = check_cost_value(feedback, self.cost_bound)
        elif self.leaf_bound == "range":
            item = self._range_leaf(feedback)  # at the round's point x, clipped per visitor
        else:
            raise ValueError("with leaf_bound='modular' the rows go through learn(); "
                             "a cost callable needs leaf_bound='range'.")
        if not completes:
            self._live = self._live + (item,)  # a new tuple: a failed call leaves it as it was
            return
        items, self._live = self._live + (item,), ()
        if self.feedback == "bandit":
            leaf = self._bandit_leaf(float(np.mean(items)))
        else:
            leaf = np.mean(items, axis=0)
        self._advance(leaf)
        self.n_rounds += 1

    @property
    def n_live_waiting(self):
        """Visitors told in the current, incomplete round (a public count)."""
        return len(self._live)

    def learn(self, X, y=None, trace=False):
        """Consume rows (``batch_size`` a round) through ``cost``.

        With ``trace`` return the published points and the played sets of
        the rounds completed here, arrays of shape (rounds, n). An invalid
        cost output in round t raises ``ValueError`` with rounds before t
        learned and round t untouched.
        """
        if self.cost is None:
            raise ValueError("learn() needs a cost; use ask()/tell() without one.")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features or not np.all(np.isfinite(X)):
            raise ValueError(f"X must be a finite array of shape (rows, {self.n_features}).")
        if not trace:
            for _ in self.run(X, np.zeros(X.shape[0])):
                pass
            return None
        points, sets = [self.x], [self.selected]  # each round's, before it is learned
        for _ in self.run(X, np.zeros(X.shape[0])):
            points.append(self.x)
            sets.append(self.selected)
        shape = (len(points) - 1, self.n_features)
        return np.array(points[:-1]).reshape(shape), np.array(sets[:-1], dtype=bool).reshape(shape)

    # ------------------------------------------------------------- learning
    def _range_leaf(self, cost):
        g = lovasz_subgradient(cost, self.x, cost_bound=self.cost_bound)
        return clip_rows(g[None, :], self.leaf_norm)[0]  # enforced for any cost

    def _bandit_leaf(self, value):
        i, rho_i, order = self._pending
        return bandit_gradient(value, i, rho_i, order, self.n_features, self._rng)

    def _round(self, X, y):
        if self.feedback == "bandit":
            values = [check_cost_value(self.cost(self.selected[None, :], row), self.cost_bound)
                      for row in X]
            leaf = self._bandit_leaf(np.mean(values))
        elif self.leaf_bound == "modular":
            modular = clip_rows(self.cost.modular(X), self.leaf_norm).mean(axis=0)
            public = lovasz_subgradient(self.cost.public, self.x)
            leaf = public + modular
        else:
            leaf = np.mean([self._range_leaf(lambda m, r=row: self.cost(m, r)) for row in X],
                           axis=0)
        self._advance(leaf)

    def _advance(self, leaf):
        self._tree.add(leaf, 1)
        S = self._tree.release()
        self.x = np.clip(-S / (self.alpha * self._tree.n_leaves), 0.0, 1.0)
        self._draw_set()

    def event(self):
        """DpEvent of every release so far (the tree nodes used)."""
        return self._tree.event(self.n_rounds)
