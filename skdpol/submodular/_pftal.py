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

Bandit (``feedback="bandit"``): a round is b visitors, and *each visitor*
plays a set of their own, drawn from the round's published x_t with fresh
curator coins (post-processing of x_t; the coins never depend on the data).
Visitor k's feedback gives a one-point estimate g^_k of the subgradient of
its cost's Lovasz extension at x_t, unbiased given x_t; the round's leaf is
their mean (1/b) sum_k g^_k, unbiased for the round-mean cost's subgradient,
with variance 1/b of one estimate's. (Playing *one* set for the whole round
and estimating from the round's mean cost is just as unbiased, but the
importance weight is drawn once per round: its variance, which dominates,
does not shrink with b, and 20,000 visitors in rounds of 50 gave 400 noisy
estimates -- the selector's bandit did not learn that way, not even at
epsilon = inf.) Neighbours differ in one visitor's value only; the coins
(set, exploration, sign) are shared, so one visitor's estimate moves by at
most twice its norm bound and the mean by 2 leaf_norm / b.

- ``leaf_bound="range"`` (any cost, seed 001's BanditSubmodPFTAL estimator):
  the set is the chain set A_i with probability rho_i >= mu / (n + 1); the
  estimate is c v / rho_i e_j with c <= 2 and v the clipped cost:
  ||g^_k|| <= 2B (n + 1) / mu, sensitivity 4B (n + 1) / (mu b).
- ``leaf_bound="modular"`` (built-in costs f(S; r) = h(S) + <m(r), 1_S>,
  h public, each |m_j| <= r_max): the subgradient of f_L at x is
  dh_L(x) + m(r), and dh_L(x_t) is public (computed exactly, outside the
  private sums). With probability mu (a curator coin) a visitor explores:
  plays a single item {j}, j uniform over the n items, and u = clip(f({j}) -
  h({j}), -r_max, r_max) = m_j(r) for an honest value; the estimate is
  g^ = (n / mu) u e_j, and 0 for a visitor who does not explore (who plays
  threshold rounding of x_t). E g^ = mu sum_j (1/n) (n / mu) m_j e_j = m(r):
  unbiased. ||g^|| <= n r_max / mu, neighbours' estimates differ by at most
  2 n r_max / mu (only u changes, by <= 2 r_max after the clip), sensitivity
  2 n r_max / (mu b). At n = 12 with the default concave cost that is
  2 * 12 / mu against the range estimator's 4 * 13.7 * 13 / mu: 30 times
  less noise, and the explored singletons are cheap sets to show.
"""

import numpy as np

from ..mechanisms import prefix_sum_mechanism
from ..online import RoundBuffer
from ..utils import clip_rows
from ._lovasz import (bandit_gradient, bandit_sample, check_cost_value,
                      lovasz_subgradient, threshold_round)

__all__ = ["SubmodularPFTAL", "bandit_leaf_bound", "bandit_modular_leaf_bound",
           "range_leaf_bound"]


def range_leaf_bound(cost_bound):
    """L2 bound 2 sqrt(2) B on a Lovasz subgradient of a submodular |f| <= B."""
    return 2.0 * np.sqrt(2.0) * cost_bound


def bandit_leaf_bound(cost_bound, n_items, mu):
    """L2 bound 2 B (n + 1) / mu on the one-point bandit estimate."""
    return 2.0 * cost_bound * (n_items + 1) / mu


def bandit_modular_leaf_bound(row_bound, n_items, mu):
    """L2 bound n r_max / mu on one visitor's singleton bandit estimate (built-in costs)."""
    return n_items * row_bound / mu


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
    noise : NoiseSpec
        Family, sampler and multiplier of the node noise (multiplier in units
        of the leaf sensitivity; see :class:`~skdpol.mechanisms.NoiseSpec`).
    feedback : {"full", "bandit"}
    mu : float, default=0.1
        Bandit exploration in (0, 1]: the weight of uniform exploration
        over the chain sets ("range"), or the probability that a visitor
        is shown a single uniformly drawn item ("modular").
    batch_size : int, default=1
        Rows per round; the round's cost is their mean. Under bandit
        feedback every row (visitor) of a round plays its own set, drawn
        from the round's point.
    horizon : int or None
    rng : numpy.random.Generator
    leaf_bound : {"auto", "range", "modular"}
        "auto" is "modular" for a built-in cost (one with ``public`` and
        ``modular`` parts), "range" otherwise. Under bandit feedback it also
        picks the estimator (module docstring).
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
    >>> from skdpol.mechanisms import NoiseSpec
    >>> from skdpol.submodular import ConcaveMassCost, SubmodularPFTAL
    >>> rng = np.random.default_rng(0)
    >>> learner = SubmodularPFTAL(n_items=3, cost=ConcaveMassCost(), alpha=0.2,
    ...                           noise=NoiseSpec(), rng=rng)
    >>> learner.learn(np.tile([1.0, -1.0, 1.0], (50, 1)))
    >>> learner.x.tolist(), learner.selected.tolist()
    ([1.0, 0.0, 1.0], [True, False, True])
    """

    def __init__(self, *, n_items, cost=None, cost_bound=None, alpha, noise,
                 feedback="full", mu=0.1, batch_size=1, horizon=None, rng,
                 leaf_bound="auto", mechanism="tree"):
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
            leaf_bound = "modular" if structured else "range"
        if leaf_bound not in ("range", "modular"):
            raise ValueError(
                f"leaf_bound must be 'auto', 'range' or 'modular', got {leaf_bound!r}.")
        if leaf_bound == "modular" and not structured:
            raise ValueError("leaf_bound='modular' needs a cost with public and modular parts.")
        self.cost, self.cost_bound, self.alpha = cost, float(cost_bound), float(alpha)
        self.feedback, self.mu, self.leaf_bound = feedback, float(mu), leaf_bound
        if feedback == "bandit" and leaf_bound == "modular":
            # one item's modular value lies in [-r_max, r_max]: the L2 bound for n = 1
            self._item_bound = float(cost.modular_norm(1))
            self.leaf_norm = bandit_modular_leaf_bound(self._item_bound, n_items, self.mu)
        elif feedback == "bandit":
            self.leaf_norm = bandit_leaf_bound(self.cost_bound, n_items, self.mu)
        elif leaf_bound == "modular":
            self.leaf_norm = float(cost.modular_norm(n_items))
        else:
            self.leaf_norm = range_leaf_bound(self.cost_bound)
        self.sensitivity = 2.0 * self.leaf_norm / self.batch_size
        self._rng = rng
        # a round's leaf is the mean of its rows' leaves, each of L2 norm <=
        # leaf_norm: its coordinates lie in [-leaf_norm, leaf_norm] (the BLT's
        # grid bound; the sensitivity 2 leaf_norm / batch_size is smaller).
        # The bandit "modular" leaf holds the private estimates only: the
        # public part dh_L(x_t) is summed exactly outside the mechanism.
        self._tree = prefix_sum_mechanism(
            mechanism, dim=self.n_features, sensitivity=self.sensitivity,
            noise=noise, horizon=horizon, rng=rng, leaf_bound=self.leaf_norm)
        self.x = np.zeros(self.n_features)  # argmin of the regulariser alone
        self._public_sum = np.zeros(self.n_features)  # bandit "modular": sum of dh_L(x_tau)
        self._live = ()  # estimates of the current round's visitors (secret until it completes)
        self._draw_set()

    # -------------------------------------------------------------- playing
    @property
    def published(self):
        return self.x[None, :]

    def _publish(self):
        pass

    def _draw_set(self):
        # the coming round's set (full information) or the coming visitor's
        # (bandit): curator coins and the published x only, never the data
        if self.feedback == "full":
            self.selected = threshold_round(self.x, self._rng)
        elif self.leaf_bound == "modular":
            if self._rng.random() < self.mu:  # explore: one item, uniformly
                j = int(self._rng.integers(self.n_features))
                self.selected = np.zeros(self.n_features, dtype=bool)
                self.selected[j] = True
                self._pending = j
            else:
                self.selected = threshold_round(self.x, self._rng)
                self._pending = None
        else:
            i, self.selected, rho_i, order, _ = bandit_sample(self.x, self.mu, self._rng)
            self._pending = (i, rho_i, order)

    def ask(self):
        """The set to play now (a copy): the round's set, or under bandit
        feedback the coming visitor's (each visitor of a round has their own)."""
        return self.selected.copy()

    def tell(self, feedback):
        """Learn one visitor's feedback on the set :meth:`ask` gave.

        ``feedback`` is the observed cost f(S_t) (bandit) or a batch
        callable ``masks -> values`` for the visitor's cost (full
        information with ``leaf_bound="range"``). A round is ``batch_size``
        visitors at the round's published point: with full information they
        all play the round's set; under bandit feedback each plays a set of
        their own (drawn from the point; :meth:`ask` shows the next one
        after every tell) and is turned into a one-point estimate at once.
        Their feedback waits (exactly, as curator state) and the round's
        leaf is the mean when the last of them reports, as :meth:`learn`
        does for rows; the published point changes only then. Invalid
        feedback raises ``ValueError`` before any state changes.
        """
        completes = len(self._live) + 1 == self.batch_size
        if completes:
            self.check_room(self.batch_size - self._pending_X.shape[0])
        if self.feedback == "bandit":
            item = self._bandit_leaf(check_cost_value(feedback, self.cost_bound))
        elif self.leaf_bound == "range":
            item = self._range_leaf(feedback)  # at the round's point x, clipped per visitor
        else:
            raise ValueError("with leaf_bound='modular' the rows go through learn(); "
                             "a cost callable needs leaf_bound='range'.")
        if not completes:
            self._live = self._live + (item,)  # a new tuple: a failed call leaves it as it was
            if self.feedback == "bandit":
                self._draw_set()  # the next visitor's set
            return
        items, self._live = self._live + (item,), ()
        self._advance(np.mean(items, axis=0))
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
        # one visitor's estimate from the value of the set it was shown (clipped)
        if self.leaf_bound == "modular":
            g = np.zeros(self.n_features)
            j = self._pending
            if j is not None:  # explored {j}: u = m_j, enforced to [-r_max, r_max]
                mask = np.zeros((1, self.n_features), dtype=bool)
                mask[0, j] = True
                u = np.clip(value - float(self.cost.public(mask)[0]),
                            -self._item_bound, self._item_bound)
                g[j] = self.n_features * u / self.mu
            return g
        i, rho_i, order = self._pending
        return bandit_gradient(value, i, rho_i, order, self.n_features, self._rng)

    def _bandit_round(self, X):
        # each row (visitor) plays its own set, in the order tell() would see them;
        # a bad cost output restores the coins, so the round is untouched
        saved = (self._rng.bit_generator.state, self.selected, self._pending)
        try:
            leaves = []
            for k, row in enumerate(X):
                value = check_cost_value(self.cost(self.selected[None, :], row),
                                         self.cost_bound)
                leaves.append(self._bandit_leaf(value))
                if k + 1 < X.shape[0]:
                    self._draw_set()
        except Exception:
            self._rng.bit_generator.state, self.selected, self._pending = saved
            raise
        return np.mean(leaves, axis=0)

    def _round(self, X, y):
        if self.feedback == "bandit":
            leaf = self._bandit_round(X)
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
        if self.feedback == "bandit" and self.leaf_bound == "modular":
            # the public part's subgradient at the published x_t: exact, no noise needed
            self._public_sum = self._public_sum + lovasz_subgradient(self.cost.public, self.x)
            S = S + self._public_sum
        self.x = np.clip(-S / (self.alpha * self._tree.n_leaves), 0.0, 1.0)
        self._draw_set()

    def event(self, n_rounds=None):
        """DpEvent of every release once ``n_rounds`` rounds are complete
        (default: now; the tree nodes used)."""
        return self._tree.event(self.n_rounds if n_rounds is None else n_rounds)
