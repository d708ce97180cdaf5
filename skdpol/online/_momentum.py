"""DP-FTRL with heavy-ball momentum ("ftrl-momentum"): the first-order stream.

Kairouz, McMahan, Song, Thakkar, Thakurta and Xu (2021), "Practical and
private (deep) learning without sampling or shuffling", release the prefix
sums of a stream's gradients through a tree (here: a BLT factorisation,
:mod:`skdpol.mechanisms._blt`) and run any optimiser on them; with
heavy-ball momentum it was the best one-pass stream of the issue-31
prototypes for regression (``benchmarks/proto_streams.py``,
``docs/benchmarks/proto_streams_schema.md``).

The algorithm, round t = 1, 2, ... of b rows (unit space: rows v = [u, 1],
``||u|| <= 1``, labels clipped to [-1, 1] or encoded classes):

    leaf_t  = sum over the round's rows of grad l(theta_{t-1}; v~)   (the only data access)
    G_t     = the mechanism's release of leaf_1 + ... + leaf_t      (noisy prefix sum)
    g_t     = (G_t - G_{t-1}) / b + alpha theta_{t-1}
    m_t     = beta m_{t-1} + g_t                                     (heavy ball, beta = 0.95)
    theta_t = theta_{t-1} - lr m_t,   lr = b / (50 R~^2)
    avg_t   = (1 - rho_t) avg_{t-1} + rho_t theta_t,  rho_t = min(1, 1 / (tail t))

and the published model after round t is avg_t mapped back to rows with the
constant column 1. The loss is Huber's with its residual clipped at
``residual_bound`` (the regressor; ``fit``'s clipping, :mod:`._noisy_gd`) or
the logistic / multinomial loss (the classifier).

**The constant column c = 0.5.** Internally the rows are v~ = [u, c]
(norm <= R~ = sqrt(1 + c^2)), and a model theta on them is the model
W = [theta_u, c theta_c] on the rows [u, 1] (v~ . theta = v . W exactly), so
the published model is mapped back without loss. A gradient on v~ is the
gradient on v with its last coordinate times c. Why: the curvature of the
intercept direction (c^2 per row) then sits nearer that of the features,
and R~^2 = 1.25 instead of 2 lets the step 1 / R~^2 grow; the prototypes
picked c = 0.5 on validation rows of every table.

**Sensitivity (replace-one).** A row's gradient is l'(s, y) v~ with
||v~|| <= R~: |l'| <= tau (Huber: the residual clipped at tau, whatever the
label and the model), <= 1 (logistic), ||l'|| <= sqrt(2) (multinomial); so
its norm is at most L = ``loss.lipschitz(R~, .)`` = tau R~, R~ or sqrt(2) R~
(:mod:`skdpol.losses`), for every theta: no projection is needed. theta_{t-1}
is a function of the releases G_1..G_{t-1} and public constants only, so the
gradients of round t are taken at the same point in both neighbouring
streams (adaptive inputs, which the tree's and the BLT's guarantee cover:
:mod:`skdpol.mechanisms._blt` notes). A row lies in exactly one leaf, and
replacing it moves that leaf by at most 2 L (two gradients of norm <= L at
one point); no other leaf moves except through earlier releases. So the
prefix sums' mechanism with leaf sensitivity 2 L is the whole cost: one
Gaussian mechanism for a BLT (a composition of one node per level for the
tree), for every round's model together. Everything after the release
(increments, the alpha term, momentum, steps, averaging, the map back to the
constant column 1) is post-processing of released prefix sums with public
numbers (b, R~, tau, beta, tail, alpha): it costs nothing more.

**Public step.** lr = b / (50 R~^2) on the round's mean gradient: the same
step per row, 1 / (50 R~^2), whatever b (1 / R~^2 is the inverse of the
public curvature bound of the Huber and squared losses in unit space), and
scale-free: unit space already divides rows by ``data_norm`` and labels by
``y_bound``, so the step does not depend on the user's units. For the Huber
loss with a known horizon the divisor grows with the public noise-to-signal
ratio d nu^2 / n (:func:`noise_step_scale`: d the width, nu the last
release's noise in units of the leaf sensitivity, n the planned rows); it is
50 wherever that ratio is below 0.4 (every real table at epsilon 1, and
d <= 100 at epsilon 1 over 100,000 rows) and for horizons of fewer than 40
rounds. A function of public quantities only, so still post-processing.

**Averaging.** rho_t = 1 / (tail t) weights iterate s in avg_t about like
s^(1/tail - 1) (polynomial-decay averaging, Shamir and Zhang 2013): the
recent iterates count most, as in the prototype's mean of the last 70 % of
the iterates, with O(d) state instead of the history (measured alike: King
County R^2 0.758 vs 0.756, wine 0.200 vs 0.184 at epsilon = 1, 5 seeds).

State: theta, the momentum, the average, the last release (4 x k x d) and
the mechanism's buffers: O(buffers x k x d); no d x d matrix.
"""

import math

import numpy as np

from ..mechanisms import prefix_sum_mechanism
from ._rounds import RoundBuffer
from ._step_noise import noise_step_scale

MOMENTUM = 0.95
TAIL = 0.7
CONSTANT = 0.5  # the constant column's value in the algorithm's own rows
STEP_DIVISOR = 50.0  # lr = b / (STEP_DIVISOR R~^2)
# batch_size="auto": ROUND_ROWS rows a round, SMALL_ROUND_ROWS when the public
# horizon holds fewer than SMALL_HORIZON rows (fewer than 100 rounds of 100:
# more, smaller steps; the prototypes' rule, measured on wine's 3,918 rows)
ROUND_ROWS, SMALL_ROUND_ROWS, SMALL_HORIZON = 100, 50, 10_000


def momentum_round(horizon_rows):
    """Rows per round of ``batch_size="auto"`` from the public horizon (rows, or None)."""
    if horizon_rows is not None and horizon_rows < SMALL_HORIZON:
        return SMALL_ROUND_ROWS
    return ROUND_ROWS


def _margins(X, W):
    """Margins X W^T, (n, k): ``@`` on arrays (or sparse rows), UnitRows' own
    products; one output as a matrix-vector product (a gemv, no strided copy)."""
    lazy = hasattr(X, "matvec")  # skdpol.linear_model._rows.UnitRows: uncopied rows
    if W.shape[0] == 1:
        s = X.matvec(W[0]) if lazy else X @ W[0]
        return np.asarray(s).reshape(-1, 1)
    return X.matmul(W.T) if lazy else np.asarray(X @ W.T)


def _gradient_sum(X, D):
    """sum_i D_i v_i^T, (k, d), for per-row derivatives D (n, k)."""
    lazy = hasattr(X, "rmatvec")
    if D.shape[1] == 1:
        g = X.rmatvec(D[:, 0]) if lazy else X.T @ D[:, 0]
        return np.asarray(g).reshape(1, -1)
    return X.rmatmul(D.T) if lazy else np.asarray(X.T @ D).T


class MomentumFTRL(RoundBuffer):
    """DP-FTRL with heavy-ball momentum and averaging (module notes).

    Parameters
    ----------
    loss : skdpol.losses loss
        Bounded derivative everywhere (Huber, logistic, multinomial).
    n_features : int
        Columns of the unit-space rows (the constant column 1 included).
    alpha : float
        Weight of alpha/2 ||theta||^2 per row (post-processing: 0 by default).
    row_bound : float
        Norm bound of the unit-space rows; with ``intercept`` their last
        column is the constant 1 and the rest has norm <= ``row_bound``
        without it (1 in unit space).
    batch_size : int
    horizon : int or None
        Rounds planned (None: open-ended; BLT epochs or the tree).
    noise : NoiseSpec
        Family, sampler and multiplier of the prefix sums' noise, in units
        of the leaf sensitivity 2 L.
    rng : numpy.random.Generator
    intercept : bool, default=True
        Whether the last column is the constant column 1.
    mechanism : {"tree", "blt"}, default="blt"
    momentum, tail, constant, step_divisor : float
        beta, the averaging's tail, c and the step's divisor (module notes).
    """

    def __init__(self, *, loss, n_features, alpha, row_bound, batch_size, horizon, noise,
                 rng, intercept=True, mechanism="blt", momentum=MOMENTUM, tail=TAIL,
                 constant=CONSTANT, step_divisor=STEP_DIVISOR):
        super().__init__(n_features=n_features, n_outputs=loss.n_outputs,
                         batch_size=batch_size, horizon=horizon)
        self.loss = loss
        self.alpha = float(alpha)
        self.momentum = float(momentum)
        self.tail = float(tail)
        self.intercept = bool(intercept)
        feature_bound = math.sqrt(row_bound**2 - 1.0) if intercept else float(row_bound)
        self.constant = float(constant) if intercept else None
        # R~: rows [u, c] (or u alone)
        self.row_bound = math.hypot(feature_bound, constant) if intercept else feature_bound
        # the per-row gradient bound L, for every model (no ball): see the notes
        self.lipschitz = loss.lipschitz(self.row_bound, math.inf)
        shape = (self.n_outputs, self.n_features)
        # column scales: v~ = v * scale; theta -> W = theta * scale
        self._scale = np.ones(self.n_features)
        if intercept:
            self._scale[-1] = self.constant
        self._tree = prefix_sum_mechanism(
            mechanism, dim=self.n_outputs * self.n_features,
            sensitivity=2.0 * self.lipschitz, noise=noise, horizon=horizon, rng=rng,
            # a leaf sums batch_size gradients of norm <= lipschitz
            leaf_bound=self.batch_size * self.lipschitz)
        self.learning_rate = self.batch_size / (
            step_divisor * self._noise_step_scale(loss) * self.row_bound**2)
        self._theta = np.zeros(shape)
        self._velocity = np.zeros(shape)
        self._average = np.zeros(shape)
        self._last_release = np.zeros(shape)
        self.W = np.zeros(shape)

    def _noise_step_scale(self, loss):
        """:func:`noise_step_scale` for the Huber loss (its derivation is about
        clipped residuals); 1 for the classifier's losses."""
        if not hasattr(loss, "threshold") or self.horizon is None:
            return 1.0
        noise_ratio = (self._tree.noise_std_at([self.horizon])[0]
                       / (2.0 * self.lipschitz))
        return noise_step_scale(self.n_features, noise_ratio,
                                self.horizon * self.batch_size, self.horizon,
                                base_divisor=STEP_DIVISOR)

    @property
    def published(self):
        return self.W

    def _round(self, X, y):
        # A round is ~15 small array operations on (k, d) vectors plus two
        # gemv on its rows; at 100 rows a round their call overhead is the
        # cost, so each result is finished in place in the fresh array that
        # holds it (the same operations in the same order: the same numbers;
        # the state arrays are replaced, never written in place, as a
        # shallow checkpoint would need).
        scale = self._scale
        theta = self._theta
        # margins of the rows v at W = theta * scale equal those of v~ at theta
        D = self.loss.derivative(_margins(X, theta * scale), y)
        leaf = _gradient_sum(X, D)
        leaf *= scale  # the gradient on v~ (curator state)
        tree = self._tree
        tree.add(leaf.ravel(), 1)
        # ---- from here on: post-processing of the released prefix sums
        released = tree.release().reshape(theta.shape)
        g = np.subtract(released, self._last_release)
        g /= self.batch_size
        self._last_release = released
        if self.alpha:
            g += self.alpha * theta
        velocity = self.momentum * self._velocity
        velocity += g
        self._velocity = velocity
        step = self.learning_rate * velocity
        theta = np.subtract(theta, step, out=step)
        self._theta = theta
        rho = min(1.0, 1.0 / (self.tail * (self.n_rounds + 1)))
        average = (1.0 - rho) * self._average
        average += rho * theta
        self._average = average
        self.W = average * scale

    def _publish(self):
        pass

    def event(self, n_rounds=None):
        """Cost of every release once ``n_rounds`` rounds are complete (default: now)."""
        return self._tree.event(self.n_rounds if n_rounds is None else n_rounds)
