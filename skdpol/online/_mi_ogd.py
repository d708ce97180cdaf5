"""Mutual-information-private online gradient descent (seed 000).

An "encryption layer" between each user and the learner turns the user's
row into one noisy vector; the learner runs lazy projected gradient descent
(dual averaging) on those vectors only:

    theta <- theta - (z_t + noise) - alpha W_t,   W_{t+1} = Pi_C(eta theta).

* ``feedback="full"``: z_t = grad l(W_t; v_t), norm <= L, so two users' vectors
  differ by at most 2 L.
* ``feedback="bandit"``: the layer draws e uniformly on the unit sphere of
  R^D (D = k d), shows the user W_t + r_t e and gets back one loss value
  phi in [0, F] (F = ``loss.max_value`` on the enlarged ball); z_t =
  (D / r_t) phi e. Given e (drawn independently of the data) two users'
  vectors differ by at most D F / r_t. E[z_t] is the gradient of the
  r_t-smoothed loss (the one-point estimate of Flaxman et al.).

The noise is Gaussian with standard deviation m times that sensitivity
(L2-Laplace of scale m times it when delta = 0). Each row enters exactly one
noisy vector and the learner is post-processing, so the whole transcript is
(epsilon, delta)-DP at the cost of ONE mechanism of multiplier m, whatever
the length of the stream (parallel composition, adaptive in the W_t): a
local guarantee, which is why the noise is so much larger than the
tree's. The seed's mutual-information bound for one round is
C = (D/2) log(1 + L^2 / (D sigma^2)) (full) and
C = (D/2) log(1 + D (F / r + L)^2 / sigma^2) (bandit), in nats.

Here the layer is simulated inside the estimator (which sees the rows); the
vectors of one round are summed before the learner sees them, which is
post-processing of the per-user releases.

Steps: full information eta = B / sqrt(G^2 T) with G^2 = (L + alpha B)^2 +
D sigma^2 (the seed's), T the planned rows or, for an unbounded stream, the
rows seen so far; bandit r_t = B t^(-1/4) and eta_t = B / sqrt(G_t^2 t),
G_t^2 = (D F / r_t)^2 (1 + D m^2), so eta_t ~ t^(-3/4) (the seed's rates).
"""

import math

import numpy as np
from dp_accounting import NoOpDpEvent

from ..mechanisms import sample_l2_laplace
from ..mechanisms import HoldsNoiseSpec
from ..utils import issparse, row_ids
from ._rounds import RoundBuffer, project_ball


class MutualInformationOGD(HoldsNoiseSpec, RoundBuffer):
    """Seed 000's noisy-gradient dual averaging, full information or bandit.

    Parameters
    ----------
    loss, n_features, radius, alpha, row_bound, batch_size, horizon :
        As for :class:`PrivateFTAL` (``horizon`` in rounds).
    feedback : {"full", "bandit"}
    noise : NoiseSpec
        Family, sampler and multiplier of the per-row noise (multiplier in
        units of the per-row sensitivity; 0: no noise).
    rng : numpy.random.Generator

    Notes
    -----
    With the discrete sampler (``noise.sampler == "discrete"``) the round's
    gradient sum gets one exact discrete noise draw
    (:func:`skdpol.mechanisms.perturb`) whose multiplier, sqrt(sum of the
    rows' noise variances) over the largest row sensitivity, is >=
    ``noise.multiplier``: each row keeps at least its guarantee.
    """

    def __init__(self, *, loss, n_features, radius, alpha, row_bound, batch_size=1,
                 horizon=None, feedback="full", noise, rng):
        super().__init__(n_features=n_features, n_outputs=loss.n_outputs,
                         batch_size=batch_size, horizon=horizon)
        if feedback not in ("full", "bandit"):
            raise ValueError(f"feedback must be 'full' or 'bandit', got {feedback!r}.")
        self.loss = loss
        self.radius = float(radius)
        self.alpha = float(alpha)
        self.row_bound = float(row_bound)
        self.feedback = feedback
        self._spec = noise
        self._rng = rng
        self.lipschitz = loss.lipschitz(row_bound, radius)
        self.dim = self.n_outputs * self.n_features
        # bandit losses are read on the ball of radius 2B (r_t <= B)
        self.loss_bound = loss.max_value(row_bound, 2.0 * radius)
        self._theta = np.zeros((self.n_outputs, self.n_features))
        self.W = np.zeros_like(self._theta)

    @property
    def published(self):
        return self.W

    def _publish(self):
        pass

    def _row_sensitivity(self, radius):
        if self.feedback == "full":
            return 2.0 * self.lipschitz
        return self.dim * self.loss_bound / radius

    def _exploration(self, rows):
        return self.radius * rows ** -0.25

    def _round(self, X, y):
        b = X.shape[0]
        first = self.n_rounds * self.batch_size + 1
        rows = np.arange(first, first + b, dtype=float)
        m = self.noise_multiplier
        if self.feedback == "full":
            z = self.loss.gradient(self.W, X, y)
            scales = np.full(b, m * 2.0 * self.lipschitz)
            g2 = (self.lipschitz + self.alpha * self.radius) ** 2 + self.dim * scales[0] ** 2
            horizon_rows = None if self.horizon is None else self.horizon * self.batch_size
            eta = self.radius / math.sqrt(g2 * (horizon_rows or rows[-1]))
        else:
            r = self._exploration(rows)
            E = self._rng.standard_normal((b, self.dim))
            E /= np.linalg.norm(E, axis=1, keepdims=True)
            Ek = E.reshape(b, self.n_outputs, self.n_features)
            S = X @ self.W.T + r[:, None] * _directions_dot(Ek, X)
            phi = np.clip(self.loss.value(S, y), 0.0, self.loss_bound)
            z = np.einsum("b,bkd->kd", self.dim * phi / r, Ek)
            scales = m * self.dim * self.loss_bound / r
            g2 = (self.dim * self.loss_bound / r[-1]) ** 2 * (1.0 + self.dim * m**2)
            eta = self.radius / math.sqrt(g2 * rows[-1])
        if m > 0 and self._spec.discrete:
            sens = float(np.max(scales)) / m
            z = self._spec.with_multiplier(math.sqrt(float(np.sum(scales**2))) / sens).perturb(
                z, sens, self._rng)
        elif m > 0:
            z = z + self._noise_sum(scales)
        self._theta -= z + b * self.alpha * self.W
        self.W = project_ball(eta * self._theta, self.radius)

    def _noise_sum(self, scales):
        shape = (self.n_outputs, self.n_features)
        if self._spec.gaussian:  # a sum of independent Gaussians is Gaussian
            std = math.sqrt(float(np.sum(scales**2)))
            return self._rng.normal(0.0, std, size=shape)
        draws = sample_l2_laplace(self._rng, self.dim, 1.0, size=scales.size)
        return (scales @ draws).reshape(shape)

    def event(self, n_rounds=None):
        """One mechanism per row, each row in one: the cost of one (once
        ``n_rounds`` rounds are complete; default: now)."""
        n_rounds = self.n_rounds if n_rounds is None else n_rounds
        if self.noise_multiplier == 0 or n_rounds == 0:
            return NoOpDpEvent()
        return self._spec.event()

    def mutual_information_bound(self):
        """Seed 000's per-round bound C (nats), the largest over the rounds.

        NaN for L2-Laplace noise (``delta=0``) and for discrete noise: the
        bound is the Gaussian channel's and does not hold for other noise of
        the same variance.
        """
        m, D = self.noise_multiplier, self.dim
        if m == 0:
            return math.inf
        if not self._spec.gaussian or self._spec.discrete:  # Gaussian channel only
            return math.nan
        if self.feedback == "full":
            return 0.5 * D * math.log1p(1.0 / (4.0 * D * m**2))
        r = self.radius  # r_t <= B; the bound is largest at the largest r
        ratio = 1.0 + self.lipschitz * r / self.loss_bound
        return 0.5 * D * math.log1p(ratio**2 / (D * m**2))


def _directions_dot(Ek, X):
    """``einsum("bkd,bd->bk", Ek, X)``: each row's product with its own
    directions; on CSR rows from their nonzeros (O(nnz k))."""
    if not issparse(X):
        return np.einsum("bkd,bd->bk", Ek, X)
    rows = row_ids(X)
    out = np.zeros(Ek.shape[:2])
    np.add.at(out, rows, Ek[rows, :, X.indices] * X.data[:, None])
    return out
