"""Private row centring in front of the regressor's "ftrl-momentum" stream.

Why. The first-order stream's leaf (a round's sum of Huber gradients) moves
by at most 2 tau R when one row is replaced, R the bound on a row's norm in
the algorithm's own space ([u, 0.5], R = 1.118). Public bounds make unit
rows long (``data_norm`` must hold every row): on King County the median
unit row has norm 0.62 of 1, while the information is in the rows' spread
(norms *about the mean*: median 0.29, 99th percentile 0.70; wine 0.23 /
0.48). A cheap private mean lets the stream learn on centred rows clipped
at a bound B well under 1, with the constant column 0.25: rows of norm
<= R_B = hypot(B, 0.25) instead of 1.118, so the leaf's noise falls by
1.118 / R_B for the same budget. The prototype (candidate "(d)" of
``docs/benchmarks/resid_ss.md``, ``benchmarks/proto_resid_ss.py``) took
one pass at epsilon 1 past ``fit`` at epsilon 0.5 on both tables over
three sets of 20 seeds; this module is its package version.

The algorithm (unit space: rows v = [x / data_norm clipped to norm 1, 1],
labels u = y / y_bound clipped to [-1, 1]; n_c = ``centre_rows``, public):

1. **Hold** the stream's first n_c rows (nothing is learned or published
   from them until then: the published model is zero); n_c is public
   (:func:`centre_rows`: the rows that make the released mean's noise norm
   about MEAN_NOISE = 0.25, ~1,000 on King County at epsilon 1).
2. **Mean.** Release s~ = [sum v, sum u] over those rows (the constant
   column left out) with the stream's Gaussian sampler at multiplier m_mean;
   mean_v = s~_v / n_c projected onto the unit ball, mean_u = s~_u / n_c
   clipped to [-1, 1] (post-processing).
3. **Bound.** B = min(MAX_BOUND, BOUND_SCALE x M~), M~ the upper edge of
   the cell the exponential mechanism picks for the median of the same
   rows' centred norms ||v_i - mean_v|| on the public grid BOUND_EDGES
   (:mod:`skdpol.mechanisms._quantile`, sampled exactly).
4. **Rows.** Every row of every round, the held ones first, becomes
   w = v - mean_v scaled onto norm B (1 - 2^-30) if longer, with the
   constant column 0.25 (CENTRED_CONSTANT); the stream
   (:class:`~skdpol.online._momentum.MomentumFTRL`) learns on [w, 0.25]
   starting from the intercept-only model of mean_u, with *today's* step
   (that of rows of norm hypot(1, 0.5): the prototype's choice, which turns
   the smaller R into less noise rather than a longer step).
5. **Published model** on the rows [v, 1]: w . theta_w + 0.25 theta_c =
   v . theta_w + (0.25 theta_c - mean_v . theta_w), so the coefficients are
   theta_w and the intercept 0.25 theta_c - mean_v . theta_w: a linear
   model of the raw row (no centring or clipping at predict time; the
   clipping is a training device).

Sensitivity (replace-one). (2) ||v|| <= 1 and |u| <= 1, so replacing one
of the n_c rows moves sum v by <= 2 and sum u by <= 2: the pair moves by
<= 2 sqrt(2) in L2. The sums are float64 sums of at most n_c rows: each
coordinate errs by <= gamma_n times the sum of its terms' magnitudes
(Higham 2002, §3.1; gamma_n = n u / (1 - n u), u = 2^-53), so each computed
block errs by <= gamma_n sum_i ||v_i|| <= gamma_n n (1 + 2^-40) (a clipped
unit row's float norm) and the released pair moves by <= 2 sqrt(2)
(1 + 2^-40)(1 + n gamma_n) = ``mean_sensitivity(n)`` (1 + 1.1e-10 at
n = 1,000). (3) Once mean_v is released it is public, so a row's centred
norm is a function of that row alone; replacing one row moves every cell's
rank distance by <= 1 (the module notes of ``_quantile``): the exponential
mechanism at epsilon_q is epsilon_q-DP and (epsilon_q^2 / 8)-zCDP. (4)
With mean_v and B public, w is a function of its own row with ||w|| <= B,
so the algorithm's rows have norm <= R_B = hypot(B, 0.25) and a round's
gradient sum moves by <= 2 tau R_B. The prefix sums' mechanism is built
before B is known, for the largest bound (B = MAX_BOUND: sensitivity
2 tau R_max); its leaves are fed times k = R_max / R_B and its releases
divided by k (:class:`_ScaledPrefixSum`), which is that mechanism on leaves
of sensitivity 2 tau R_B: noise std m 2 tau R_B. A row lies in the centring
release and in one leaf; the centring's releases are public before any
leaf is formed (adaptive composition), and everything after (momentum,
averaging, the map back) is post-processing.

Calibration. The three pieces are Gaussian / zCDP mechanisms whose zCDP
rho is proportional to 1 / m^2, m the stream's multiplier: the stream
rho_s = 1 / (2 m^2) (its BLT is one Gaussian mechanism; zCDP on the
discrete sampler's grid), the mean rho_mean = (MEAN_SHARE / STREAM_SHARE)
rho_s (multiplier m sqrt(STREAM_SHARE / MEAN_SHARE)) and the bound
rho_q = (BOUND_SHARE / STREAM_SHARE) rho_s (epsilon_q = sqrt(8 rho_q)). One
multiplier m is solved for the composition (:func:`centred_event`, in
:meth:`~skdpol.mechanisms.NoiseSpec.calibrated`), so the whole costs
exactly (epsilon, delta): 5 % of the zCDP budget for the mean, 2 % for the
bound, 93 % for the stream. The float sampler composes the same events
(Gaussian ones counted as rho = 1 / (2 m^2): dp-accounting's RDP).

When. :func:`centres` (public quantities only): the Huber loss (the
regressor) with an intercept, Gaussian noise at a finite epsilon, and
rounds of more than one row, a planned horizon under 100,000 rows (past
it the centring costs a third of the stream's throughput and gains
nothing: MAX_HORIZON), and :func:`centre_rows` finds the hold at
most a quarter of the planned rows (10,000 rows for an open horizon). At
epsilon = inf nothing is gained (no noise) and the stream is today's, bit
for bit; pure DP (Laplace) keeps today's stream; per-row rounds
(``progressive_predict``) publish a model before every row, which a held
first chunk cannot; and where the mean would need more rows (wide rows at
a short horizon: d = 1,000 over 20,000 rows at epsilon 1 needs ~7,300) its
noise would move every row by about its own norm, and clipping them onto
B would bias the model: today's stream runs.

Measured (20 seeds, epsilon 1, chunks of 1,000, ``benchmarks/bench_stream.py``):
see ``docs/regressor.md`` ("Streams").
"""

import copy
import math

import numpy as np
from dp_accounting.dp_event import ComposedDpEvent

from ..mechanisms import NoiseSpec, exponential_mechanism, quantile_distances, target_rank
from ..mechanisms import noise_event, quantile_event
from ..utils import copy_generator, issparse, stack_rows
from ._momentum import MomentumFTRL

# rows held for the centring: as many as make the released mean's noise
# (norm ~ std sqrt(d) / rows) MEAN_NOISE in unit space (King County at
# epsilon 1: ~1,000 rows, the prototype's first chunk; wine 800), at least a
# round; the stream centres only when that is at most MAX_HOLD of its
# planned rows (OPEN_HOLD rows for an open horizon). Public: the multiplier,
# the width and the horizon.
MEAN_NOISE = 0.25
MAX_HOLD = 0.25
OPEN_HOLD = 10_000
# ... and only over a planned horizon of fewer than MAX_HORIZON rows: past
# it the rows outweigh the noise, and the centring's two extra passes over
# each round's rows (the centred norms for the clip) cost throughput for
# nothing. Measured (one thread, 200,000 rows of d = 90 in chunks of 10,000,
# benchmarks/bench_speed_memory.py's stream): centred R^2 0.9888 at 0.63-0.66x
# SGDRegressor's rows per second, uncentred 0.9887 at 0.93-0.96x; d = 1,000
# over 100,000 rows (bench_wide.py) 0.948-0.953 against 0.937-0.942 at
# 1.5-2.5x the time. The same threshold as the automatic rounds'
# (momentum_round: 1,000 rounds of 100 rows): every real table of the
# benchmarks is below it. An open horizon still centres (its length is not
# known: the small tables are where centring pays).
MAX_HORIZON = 100_000
MEAN_SHARE, BOUND_SHARE = 0.05, 0.02  # zCDP shares of the budget
STREAM_SHARE = 1.0 - MEAN_SHARE - BOUND_SHARE
BOUND_SCALE = 2.0  # B = 2 x the private median of the centred norms ...
MAX_BOUND = 1.0  # ... at most 1 (rows that fill their ball: R_B = 1.03 < 1.118)
BOUND_EDGES = np.linspace(0.0, 2.0, 81)  # public grid of centred norms (<= 2)
CENTRED_CONSTANT = 0.25  # the constant column of the centred rows
STEP_ROW_BOUND = math.hypot(1.0, 0.5)  # today's step: rows [u, 0.5] of norm <= 1.118
_SHRINK = 1.0 - 2.0**-30  # float norms of clipped rows stay <= B


def centres(loss, intercept, noise, epsilon, batch_size):
    """Whether the regressor's "ftrl-momentum" stream centres its rows (module
    notes, "When"): public quantities only."""
    return (hasattr(loss, "threshold") and intercept is not None and noise.gaussian
            and math.isfinite(epsilon) and int(batch_size) > 1)


def centre_rows(multiplier, sampler, n_features, batch_size, horizon_rows):
    """Rows the stream holds for its centring (module notes; ``n_features``
    without the constant column), or None where it should not centre (a
    planned horizon of MAX_HORIZON rows or more; a hold of more than MAX_HOLD
    of ``horizon_rows``, or OPEN_HOLD rows when that is None).
    Public quantities only."""
    noise = NoiseSpec("gaussian", sampler, multiplier * math.sqrt(STREAM_SHARE / MEAN_SHARE))
    std = noise.std(2.0 * math.sqrt(2.0), n_features + 1)  # of each released sum
    rows = max(int(batch_size), math.ceil(std * math.sqrt(n_features) / MEAN_NOISE))
    if horizon_rows is not None and horizon_rows >= MAX_HORIZON:
        return None
    limit = OPEN_HOLD if horizon_rows is None else MAX_HOLD * horizon_rows
    return rows if rows <= limit else None


def bound_epsilon(multiplier):
    """epsilon_q of the bound's exponential mechanism when the stream's prefix
    sums have multiplier m: rho_q = (BOUND_SHARE / STREAM_SHARE) / (2 m^2)."""
    return math.sqrt(8.0 * (BOUND_SHARE / STREAM_SHARE) * 0.5) / multiplier


def centring_events(multiplier, sampler):
    """The mean's and the bound's events at the stream's multiplier m."""
    mean_multiplier = multiplier * math.sqrt(STREAM_SHARE / MEAN_SHARE)
    return [noise_event(mean_multiplier, "gaussian", sampler),
            quantile_event(bound_epsilon(multiplier), "zcdp")]


def centred_event(stream_event, multiplier, sampler):
    """The whole cost: the centring's two releases and the stream's ``stream_event``."""
    return ComposedDpEvent([*centring_events(multiplier, sampler), stream_event])


def mean_sensitivity(n_rows):
    """L2 sensitivity of the float64 sums [sum v, sum u] of ``n_rows`` rows
    (module notes): 2 sqrt(2) times the float error bound."""
    u = 2.0**-53
    gamma = n_rows * u / (1.0 - n_rows * u)
    return 2.0 * math.sqrt(2.0) * (1.0 + 2.0**-40) * (1.0 + n_rows * gamma)


def _parts(X):
    """(raw rows x (n, d), factors f (n,), constant column k (n,), the squared
    norms of x or None) of unit rows [f x, k]: uncopied for lazy rows
    (:class:`~skdpol.linear_model._rows.UnitRows`, whose norms were computed
    for their clip) and arrays (f = 1), a round's CSR rows made dense. k is 0
    on the public zero rows that pad ``fit``'s and a final round, 1 on every
    real row."""
    if issparse(X):
        X = X.toarray()
    if hasattr(X, "factor"):  # UnitRows: the caller's rows, not copied
        return X.X, X.factor, np.full(X.X.shape[0], float(X.const)), X.sq
    A = np.asarray(X, dtype=np.float64)
    return A[:, :-1], np.ones(A.shape[0]), A[:, -1], None


def _centred_sq_norms(raw, f, mean, sq=None):
    """||f_i x_i - mean||^2 row by row, expanded (no copy of the rows):
    f^2 ||x||^2 - 2 f x.mean + ||mean||^2 (``sq``: ||x||^2, when known)."""
    if sq is None:
        sq = np.einsum("ij,ij->i", raw, raw)
    xm = raw @ mean
    return f * f * sq - 2.0 * f * xm + float(mean @ mean)


class CentredRows:
    """The centred rows w_i = c_i (f_i x_i - m), with the constant column k_i
    appended, uncopied: ``matvec`` / ``rmatvec`` as
    :class:`~skdpol.linear_model._rows.UnitRows` (the products the rounds
    take), w . theta = c f (x . theta_w) - c (m . theta_w) + k theta_c and
    r @ W = [(r c f) @ X - m sum(r c), sum(r k)]."""

    __slots__ = ("X", "scale", "clip", "mean", "const")

    def __init__(self, X, scale, clip, mean, const):
        self.X, self.scale, self.clip, self.mean, self.const = X, scale, clip, mean, const

    @property
    def shape(self):
        return (self.X.shape[0], self.X.shape[1] + 1)

    def __array__(self, dtype=None, copy=None):
        out = np.empty(self.shape)
        np.multiply(self.X, self.scale[:, None], out=out[:, :-1])
        out[:, :-1] -= self.clip[:, None] * self.mean
        out[:, -1] = self.const
        return out if dtype is None else out.astype(dtype, copy=False)

    def matvec(self, w):
        d = self.X.shape[1]
        s = np.dot(self.X, w[:d])
        s *= self.scale
        s -= self.clip * float(self.mean @ w[:d])
        s += self.const * w[d]
        return s

    def rmatvec(self, r):
        d = self.X.shape[1]
        g = np.empty(d + 1)
        np.dot(r * self.scale, self.X, out=g[:d])
        g[:d] -= self.mean * float(np.add.reduce(r * self.clip))
        g[d] = float(np.add.reduce(r * self.const))
        return g


class _ScaledPrefixSum:
    """A prefix-sum mechanism whose leaves are fed times ``k`` and released
    divided by ``k`` (module notes): the inner mechanism's sensitivity over
    ``k``. Copies copy the inner mechanism (a checkpoint)."""

    def __init__(self, inner, k):
        self.inner, self.k = inner, float(k)

    def __copy__(self):
        return _ScaledPrefixSum(copy.copy(self.inner), self.k)

    @property
    def n_leaves(self):
        return self.inner.n_leaves

    def add(self, leaf, n_leaves=1):
        self.inner.add(leaf * self.k, n_leaves)

    def release(self):
        return self.inner.release() / self.k

    @property
    def sensitivity(self):  # of the leaves as fed here (the inner one's over k)
        return self.inner.sensitivity / self.k

    def noise_std_at(self, times):
        return self.inner.noise_std_at(times) / self.k

    def event(self, n_leaves=None):
        return self.inner.event(n_leaves)


class CentredMomentumFTRL(MomentumFTRL):
    """:class:`MomentumFTRL` on privately centred rows (module notes).

    Parameters are those of :class:`MomentumFTRL` for the regressor (the
    Huber loss, an intercept; ``row_bound`` and ``constant`` are this
    class's own), plus ``centre_rows`` (public: rows held for the centring).
    """

    sparse_blocks = False  # its rounds read the rows' parts (_parts), not only products

    def __init__(self, *, loss, n_features, alpha, batch_size, horizon, noise, rng,
                 centre_rows, mechanism="blt", step_rows=None, **kwargs):
        kwargs.pop("row_bound", None)
        kwargs.pop("constant", None)
        kwargs.pop("intercept", None)
        # the mechanism is sized for B = MAX_BOUND: rows [w, 1], ||w|| <= 1
        super().__init__(loss=loss, n_features=n_features, alpha=alpha,
                         row_bound=math.hypot(MAX_BOUND, 1.0), batch_size=batch_size,
                         horizon=horizon, noise=noise, rng=rng, intercept=True,
                         mechanism=mechanism, constant=CENTRED_CONSTANT,
                         step_rows=step_rows, step_row_bound=STEP_ROW_BOUND, **kwargs)
        self.centre_rows = int(centre_rows)
        self._sampler = noise.sampler
        self._multiplier = noise.multiplier
        # the centring's own generator, keyed from the stream's (curator state)
        self._centre_rng = np.random.Generator(np.random.Philox(
            key=rng.integers(0, 2**64, size=2, dtype=np.uint64)))
        self.mean = None  # released: mean_v (d,), mean_u, bound B; None before
        self.mean_label = 0.0
        self.bound = None

    def __copy__(self):
        clone = super().__copy__()
        clone._centre_rng = copy_generator(self._centre_rng)
        return clone

    # ----------------------------------------------------------- the centring
    def _release_centring(self, X, y):
        """Steps 2-3 of the module notes on the held rows ``X`` (unit rows [f x,
        1]; zero rows, the public padding of ``fit`` or a final round, left
        out) and their labels ``y``; then the start of step 4."""
        raw, f, const, sq = _parts(X)
        real = const != 0.0
        n = int(real.sum())
        if n == 0:  # nothing held but public zero rows: nothing to centre on
            self._centred(np.zeros(raw.shape[1]), 0.0, MAX_BOUND)
            return
        weights = np.where(real, f, 0.0)
        sums = np.append(weights @ raw, np.asarray(y, dtype=np.float64)[real].sum())
        noise = NoiseSpec("gaussian", self._sampler,
                          self._multiplier * math.sqrt(STREAM_SHARE / MEAN_SHARE))
        released = noise.perturb(sums, mean_sensitivity(n), self._centre_rng)
        mean = released[:-1] / n
        norm = float(np.linalg.norm(mean))
        if norm > 1.0:  # projected onto the unit ball (post-processing)
            mean = mean / norm
        mean_u = float(np.clip(released[-1] / n, -1.0, 1.0))
        # each row's centred norm is a function of its row and the public mean
        sq = _centred_sq_norms(raw, f, mean, sq)  # every held row, uncopied
        norms = np.sqrt(np.maximum(sq if real.all() else sq[real], 0.0))
        norms = np.sort(np.clip(norms, BOUND_EDGES[0], BOUND_EDGES[-1]))
        distances = quantile_distances(norms, BOUND_EDGES, target_rank(0.5, n))
        cell = exponential_mechanism(distances, bound_epsilon(self._multiplier),
                                     self._centre_rng)
        self._centred(mean, mean_u, min(MAX_BOUND, BOUND_SCALE * float(BOUND_EDGES[cell + 1])))

    def _centred(self, mean, mean_u, bound):
        self.mean, self.mean_label, self.bound = mean, mean_u, bound
        # leaves of sensitivity 2 tau R_B through the mechanism sized for R_max;
        # the stated bounds become the rows' own (the step was set at the start)
        row_bound = math.hypot(bound, CENTRED_CONSTANT)
        self._tree = _ScaledPrefixSum(self._tree, self.row_bound / row_bound)
        self.row_bound = row_bound
        self.lipschitz = self.loss.lipschitz(row_bound, math.inf)
        theta = np.zeros_like(self._theta)
        theta[:, -1] = mean_u / CENTRED_CONSTANT  # the intercept-only model of mean_u
        self._theta, self._average = theta, theta.copy()

    def waits(self, rows_waiting):
        """Whether ``rows_waiting`` rows waiting would still be held (no round
        learned; :meth:`StreamState.cost_after`): public counts only."""
        return self.mean is None and rows_waiting < self.centre_rows

    # ----------------------------------------------------------- the rounds
    def run(self, X, y):
        if self.mean is None:
            self.check_room(X.shape[0])
            waiting = self._pending_X.shape[0]
            if waiting + X.shape[0] < self.centre_rows:  # held (step 1)
                self._pending_X = stack_rows([self._pending_X, X])
                self._pending_y = np.concatenate([self._pending_y, y])
                return
            if waiting:  # the held rows go first (copied once, as any waiting rows)
                X = stack_rows([self._pending_X, X])
                y = np.concatenate([self._pending_y, y])
                self._pending_X, self._pending_y = self._pending_X[:0], self._pending_y[:0]
            self._release_centring(X[:self.centre_rows], y[:self.centre_rows])
        yield from super().run(X, y)

    def flush(self):
        """:meth:`RoundBuffer.flush`; rows still held are centred on first
        (their count is public), learned in whole rounds, then the rest."""
        if self.mean is None and self._pending_X.shape[0]:
            rows, labels = self._pending_X, self._pending_y
            self._pending_X, self._pending_y = rows[:0], labels[:0]
            self._release_centring(rows, labels)
            self.learn(rows, labels)
        return super().flush()

    def _round(self, X, y):
        raw, f, const, sq = _parts(X)
        # c = min(1, B' / ||f x - m||~), B' = B (1 - 2^-30): the expanded square
        # errs by <= 4 gamma_(d+3) (its three terms have magnitude <= 1, 2 and
        # 1; Higham §3.1), added to it, so the true norm of the row used is
        # <= B' whatever the rounding (the module notes: ||w|| <= B)
        d = raw.shape[1]
        slack = 4.0 * (d + 3) * 2.0**-53 / (1.0 - (d + 3) * 2.0**-53)
        q = np.maximum(_centred_sq_norms(raw, f, self.mean, sq), 0.0) + slack
        clip = np.minimum(1.0, (self.bound * _SHRINK) / np.sqrt(q))
        clip[const == 0.0] = 0.0  # zero rows (public) stay zero rows
        super()._round(CentredRows(raw, clip * f, clip, self.mean, const), y)

    # ----------------------------------------------------------- releases
    @property
    def published(self):
        W = self._average * self._scale
        if self.mean is not None:  # the intercept absorbs the centring (step 5)
            W[:, -1] -= W[:, :-1] @ self.mean
        return W

    def event(self, n_rounds=None):
        """The stream's cost once ``n_rounds`` rounds are complete (default:
        now), with the centring's once a round has run (the centring is
        released with the first round's rows, or at a flush)."""
        n_rounds = self.n_rounds if n_rounds is None else n_rounds
        stream = self._tree.event(n_rounds)
        if n_rounds == 0:
            return stream
        return centred_event(stream, self._multiplier, self._sampler)
