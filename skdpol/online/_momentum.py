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
ratio r = d nu^2 / n (:func:`noise_step_scale`: d the width, nu the last
release's noise in units of the leaf sensitivity, n the planned rows), like
50 sqrt(1 + (r / 0.2)^2): 50 at epsilon = inf, 67 for King County at
epsilon 1 (r = 0.17), 108 for wine (r = 0.38). A horizon of T < 40 rounds
(the heavy ball's transient) keeps 50 unless one round's noise ratio r T
passes 20, where it takes 50 r T / 20 (short noisy streams: d = 20 over
1,000 rows at epsilon 0.5 published R^2 -2.8 with 50). A function of public
quantities only, so still post-processing.

**Open horizon** (``horizon=None``). There is no planned n, so round t takes
the rule of a stream planned to end at T = max(t, 40) rounds
(:func:`open_rule_rounds`): r_t = d nu_T^2 / (T b), nu_T the open
mechanism's noise std at T over 2 L (``noise_std_at``: a function of the
mechanism's design, epsilon, delta and T, never of the rows), T b the rows
of T rounds. lr_t = min(b, step_rows) / (50 noise_step_scale(r_t) R~^2) is
re-read every round below 64 and 16 times per doubling after
(:func:`refresh_open_step`). The step starts small (few rows: r_t large)
and grows as rows pile up (r_t ~ 1 / t), reaching at round n / b the
known horizon's rule at the open mechanism's noise. Privacy: lr_t is a
function of t, b, d, R~, L and the mechanism's public noise schedule, fixed
before any row is read (the same function in both neighbouring streams), so
theta_t = theta_{t-1} - lr_t m_t is still post-processing of the releases
G_1..G_t; the gradients of round t are still taken at a theta_{t-1} that
depends on G_1..G_{t-1} and public numbers only, which is all the
sensitivity argument above uses. The momentum m_t is a sum of released
increments and does not contain lr, so a varying lr_t scales only the
step it is applied to. Without noise (nu = 0) the scale is 1 and the step
is b / (50 R~^2) as before. Measured (``docs/benchmarks/open_horizon.md``,
one pass without a horizon, medians of 20 seeds of ``bench_stream.py``'s
splits; the known horizon in brackets): epsilon 1, King County 0.719 ->
0.745 (0.755), wine 0.070 -> 0.118 (0.180); epsilon 0.5, 0.408 -> 0.698
(0.738) and -0.600 -> 0.069 (0.108); epsilon = inf unchanged. What is left
is the open BLT's noise (1.36x the planned BLT's at King County's 172
rounds, 1.5x at wine's) and wine's rounds (100 rows open, 50 with a
horizon under 10,000 rows). Short open streams (10-20 rounds of d = 4-8
at epsilon 1) can lose to the full step: the floor of 40 rounds is the
rule's own; 80 helps them and costs some streams of 20-100 rounds (the page's
floor sweep).

**Its cap (``step_rows``).** A round is one heavy-ball step on its mean
loss, whose curvature is at most lambda <= R~^2 (the mean of v~ v~^T over
rows of norm <= R~; Huber's and the logistic loss's are smaller). On a
quadratic, heavy ball with momentum beta is stable only for lr lambda <
2 (1 + beta) = 3.9, and lr R~^2 = b / 50: rounds of 100 rows keep lr lambda
<= 2 for any data, half the bound, but from b ~ 195 rows on a stream whose
rows share one direction (lambda near R~^2) can diverge. Measured
(``docs/benchmarks/momentum_rounds.md``, 200,000 rows near one direction, 5
seeds, epsilon = inf): rounds of 200 with the per-row step fixed give R^2
-9.8 (median; -22.1 to 0.91), rounds of 100 0.90 (0.88 to 0.91), rounds of
200 with the step of 100 0.90 (but one seed -0.44: on this ill-conditioned
stream they are less robust than rounds of 100 at epsilon = inf; at epsilon
1 their range is higher, 0.84-0.90 against 0.75-0.86). So the bigger rounds
that ``batch_size="auto"`` takes past a 100,000-row horizon
(:func:`momentum_round`) take the step of rounds of 100 rows: lr =
min(b, 100) / (50 R~^2) (``step_rows`` = :func:`momentum_step_rows`;
``release_every`` k scales both by k, and caps the step after the noise
scale at one round's, ``stable_rows``: k rounds' step gave lr lambda up to
2k, and rows near one direction diverged, docs/benchmarks/release_every.md). With its 1,000 such
rounds (more past 1,000,000 rows) the stream still moves lr x rounds >=
1,000 x 2 / R~^2: more than any real table's few hundred rounds of 100
(the capped step needs enough
rounds: on King County's 173 rounds of 100, rounds of 200 / 400 with the
step of 100 lose 0.007-0.010 / 0.025-0.033 R^2, medians of 5 seeds; the rule
never does that below 100,000 rows). A set ``batch_size`` keeps its own step
(lr = b / (50 s R~^2), s the noise rule's scale) up to the regressor's cap
after that scale, lr <= 100 / (50 R~^2) (``stable_rows``: lr lambda <= 2
whatever the rounds). Measured on friedman1 (50,000 rows whose columns
share a direction, 2 seeds): rounds of 1,000 at epsilon = inf 0.10 -> 0.69,
rounds of 5,000 -90 -> -0.05 (10 small steps: they learn little, but
no longer diverge), at epsilon 1 (where s kept them stable) 0.72 -> 0.71
and 0.71 -> 0.25; rounds of 200 and the automatic ones unchanged (0.72).
The classifier's losses have a quarter of that curvature (sigma' <= 1/4):
its automatic rounds past a 100,000-row horizon (500-1,000 rows) take the
step of at most 600 rows, lr lambda <= 3 (:func:`momentum_round`).

**Averaging.** rho_t = 1 / (tail t) weights iterate s in avg_t about like
s^(1/tail - 1) (polynomial-decay averaging, Shamir and Zhang 2013): the
recent iterates count most, as in the prototype's mean of the last 70 % of
the iterates, with O(d) state instead of the history (measured alike: King
County R^2 0.758 vs 0.756, wine 0.200 vs 0.184 at epsilon = 1, 5 seeds).
The classifier's losses keep tail = 0.7 (``TAIL``). The Huber loss takes
``HUBER_TAIL`` = 0.6: weights growing like s^(2/3) instead of s^0.43, which
forget the early iterates (the heavy ball's transient from the zero model)
faster and still average the noise of the later rounds. Chosen among 0.5,
0.55, 0.6, 0.65 and 0.7 away from the acceptance bench's test splits
(``benchmarks/bench_momentum_noise_rule.py``: seeds 100-119, and a
validation split carved from the training rows of seeds 0-19; one pass,
the step rule above; paired changes of test R^2 against 0.7, medians): at
epsilon = inf +0.001 (King County) and +0.003-0.004 (wine), every seed up;
epsilon 0.5 +0.001-0.003 / +0.003-0.004; epsilon 1 -0.000 / +0.002-0.004;
d = 1,000 dense at epsilon 1 (``benchmarks/bench_wide.py --widths 1000
--kinds regressor --seeds 3``) 0.929-0.932 -> 0.937-0.942.
0.5 (weights like s, Lacoste-Julien, Schmidt and Bach 2012) gained about
twice as much on wine and at d = 1,000 but cost King County at epsilon 1
0.001-0.002 and the 200,000-row generated stream of
``benchmarks/bench_momentum_rounds.py`` 0.0002 (every seed), where 0.6 is
level with 0.7. A public constant: post-processing.

State: theta, the momentum, the average, the last release (4 x k x d) and
the mechanism's buffers: O(buffers x k x d); no d x d matrix.

**The regressor's centred rows.** With an intercept, Gaussian noise and a
finite epsilon the regressor runs this stream on rows centred on a private
mean of its first rows and clipped at a private bound
(:class:`~skdpol.online._centred.CentredMomentumFTRL`, a subclass; its
module notes derive the sensitivities and the joint calibration); the
step stays that of the rows [u, 0.5] (``step_row_bound``).
"""

import copy
import math

import numpy as np

from ..mechanisms import prefix_sum_mechanism
from ..utils import InPlaceArrays
from ._registry import LARGE_HORIZON
from ._rounds import ReplacedState, RoundBuffer
from ._curvature import CurvatureCap
from ._momentum_kernel import momentum_step
from ._step_noise import (NOISE_MIN_ROUNDS, capped_momentum, noise_step_scale, open_rule_rounds,
                          refresh_open_step)

MOMENTUM = 0.95
TAIL = 0.7
HUBER_TAIL = 0.6  # the Huber loss's tail (the notes' "Averaging")
CONSTANT = 0.5  # the constant column's value in the algorithm's own rows
STEP_DIVISOR = 50.0  # lr = b / (STEP_DIVISOR R~^2)
# batch_size="auto" (momentum_round): ROUND_ROWS rows a round, SMALL_ROUND_ROWS
# when the public horizon holds fewer than SMALL_HORIZON rows (fewer than 100
# rounds of 100: more, smaller steps; the prototypes' rule, measured on wine's
# 3,918 rows), and at most MAX_ROUNDS rounds over a longer horizon (rounds of
# ceil(horizon / MAX_ROUNDS) rows past MAX_ROUNDS x ROUND_ROWS = 100,000 rows),
# rounds of at most MAX_ROUND_ROWS rows (past 1,000,000 rows: more rounds)
ROUND_ROWS, SMALL_ROUND_ROWS, SMALL_HORIZON = 100, 50, 10_000
MAX_ROUNDS, MAX_ROUND_ROWS = 1_000, 1_000
# the classifier's rounds past LARGE_HORIZON (100,000 rows, where "auto" takes
# this stream for it: skdpol.online._registry.auto_stream): at
# least CLASSIFIER_ROUNDS rounds of at most MAX_ROUND_ROWS rows, each taking the
# step of at most CLASSIFIER_STEP_ROWS rows (the logistic curvature is a quarter
# of the bound the regressor's ROUND_ROWS is set for: the notes' "Its cap")
CLASSIFIER_ROUNDS, CLASSIFIER_STEP_ROWS = 200, 6 * ROUND_ROWS
# a round's post-processing as one compiled loop (._momentum_kernel, the same
# bits) from this many coordinates (k x d) on (None: the numpy lines always,
# the reference): at every width, as the BLT's step (mechanisms/_blt.py,
# _KERNEL_WIDTH: a noisy stream loads numba for its sampler anyway)
_KERNEL_WIDTH = 1


def momentum_round(horizon_rows, classifier=False):
    """Rows per round of ``batch_size="auto"`` from the public horizon (rows, or None);
    ``classifier``: the rule of the classifier's losses.

    Up to ``MAX_ROUNDS x ROUND_ROWS`` = 100,000 rows (every real table of the
    benchmarks) the rounds are those measured by the prototypes: 100 rows,
    50 below ``SMALL_HORIZON`` = 10,000 rows. A longer horizon is cut into at
    most ``MAX_ROUNDS`` = 1,000 rounds of ceil(horizon / 1,000) rows, and
    rounds never pass ``MAX_ROUND_ROWS`` = 1,000 rows (a horizon past
    1,000,000 rows takes more rounds of 1,000): the gain stops there (rows
    per second at d = 90, same run, against SGD: 0.95-1.08x at rounds of
    200, 1.34-1.86x at 1,000, 1.62-1.77x at 2,000), and a round bigger than
    a reader's chunks would leave calls that publish no new model.

    Why the cap. A round costs ~45 small array operations (the two products
    with its rows, the loss's derivative, one BLT step, momentum and
    averaging) whatever its size, so at rounds of 100 rows the per-round
    overhead, not the O(b d) arithmetic, is the stream's cost: rows per
    second grow almost linearly with b at first
    (``benchmarks/bench_momentum_rounds.py``, 200,000 rows at d = 90, rounds
    of 100 / 200 / 400: 0.53 / 0.97 / 1.20 million rows/s on a quiet moment
    of the shared machine). What bigger rounds do to the model
    (``docs/benchmarks/momentum_rounds.md``, 5 seeds): they take the step
    of rounds of 100 (the notes' "Its cap"), so the stream moves as far in
    1,000 rounds as a 100,000-row stream of today's rounds, and each round's
    mean gradient carries less noise (the released prefix sums have fewer
    leaves of the same sensitivity 2 L, each a sum of more rows). On the
    generated stream rounds of 200 with that step reach R^2 0.9888 at
    epsilon 1 against 0.9861 for rounds of 100, and the same 0.9896 at
    epsilon = inf. On the real tables (a few hundred rounds) bigger rounds
    cost the regressor (King County, wine: 0.01-0.04 R^2 at epsilon 1 for
    rounds of 200 with the step of 100) and are mixed
    for the classifier (Adult, credit default), so only horizons past 1,000
    rounds of 100 get bigger rounds. The rule reads the public horizon only
    (a row count, not the data), so the rounds and the model are as
    scale-free as before: rescaling X with ``data_norm``, or y with
    ``y_bound``, changes neither.

    The classifier (``classifier=True``) from ``LARGE_HORIZON`` = 100,000
    rows on, where ``algorithm="auto"`` leaves "ls" for this stream (issue
    31's throughput; ``skdpol.online._registry.auto_stream``): rounds of
    ceil(horizon / ``CLASSIFIER_ROUNDS``) rows, at least 500 at 100,000 rows,
    at most ``MAX_ROUND_ROWS`` (1,000 from 200,000 rows on), each with the
    step of at most ``CLASSIFIER_STEP_ROWS`` = 600 rows
    (:func:`momentum_step_rows`). Its loss's curvature is at most R~^2 / 4
    (sigma' <= 1/4), so lr lambda <= 600 / (4 x 50) = 3 on any rows, inside
    heavy ball's 2 (1 + 0.95) = 3.9 (the notes' "Its cap"). The step of 400
    rows (lr lambda <= 2, the Huber rounds' margin) cost 0.004-0.011 of
    accuracy on rows near one direction and 0.002 on Adult at epsilon =
    inf; 800 and 1,000 (past the bound on some rows) gained a little more
    there and nothing elsewhere (3 seeds each). Measured
    (``docs/benchmarks/classifier_large.md``, 3 seeds, one pass, epsilon
    0.5 / 1 / inf): d = 10, 54, 200 at 100,000 to 500,000 rows, rows of a
    quarter of ``data_norm``, a 12 % class, logistic labels, rows near one
    direction, Adult and credit default drawn to 200,000 rows. At epsilon
    1 they score at or above "ls" on all eleven streams (short rows: 0.954
    against 0.827; d = 200: 0.958 against 0.881; Adult 0.860 against
    0.855), at 0.5 on nine (credit default 0.765 against 0.767, rows near
    one direction 0.946 against 0.949), at epsilon = inf on ten (rows near
    one direction: 0.948 against 0.967; SGD 0.962). They run at 1.0-1.6x
    ``SGDClassifier``'s rows per second (1.0x at 100,000 rows, in rounds of
    500) where "ls" ran 0.34-0.97x at d >= 54 (1.45x at d = 10); rounds of
    200 rows (the regressor's rule at 200,000) ran at 0.7-1.05x. Below
    100,000 rows the classifier takes the regressor's rounds (its
    "ftrl-momentum", when chosen, is unchanged there).
    """
    if horizon_rows is None:
        return ROUND_ROWS
    if horizon_rows < SMALL_HORIZON:
        return SMALL_ROUND_ROWS
    if classifier and horizon_rows >= LARGE_HORIZON:
        return min(MAX_ROUND_ROWS, -(-int(horizon_rows) // CLASSIFIER_ROUNDS))
    return min(MAX_ROUND_ROWS, max(ROUND_ROWS, -(-int(horizon_rows) // MAX_ROUNDS)))


def momentum_step_rows(release_every=1, classifier=False):
    """The cap on a round's step under ``batch_size="auto"``: that of
    ``release_every`` x ROUND_ROWS rows (``MomentumFTRL(step_rows=...)``),
    ``release_every`` x CLASSIFIER_STEP_ROWS for the classifier's losses
    (``classifier``; their curvature is a quarter of the Huber loss's bound,
    and CLASSIFIER_STEP_ROWS = 600 keeps lr lambda <= 3 < 3.9).

    Every round the rule gives up to a 100,000-row horizon is at most this
    big, so their step is today's (b / (50 R~^2)); the bigger rounds of a
    longer horizon take the step of rounds of ROUND_ROWS (module notes:
    "Public step").
    """
    return (CLASSIFIER_STEP_ROWS if classifier else ROUND_ROWS) * int(release_every)


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


# widths from which a copy and one multiplied column beat the full product
# with the column scales (measured: 1.5 vs 0.8 us at d = 91, 2.3 vs 1.8 us
# at 4,097, 52 vs 72 us at 2^17 + 1 columns)
COLUMN_ONLY_WIDTH = 2**14


def _column_scaled(theta, constant, scale, in_place=False):
    """``theta * scale`` for the column scales ``scale`` = [1, ..., 1,
    constant] (without an intercept ``constant`` is None and ``scale`` all
    ones), bit for bit; ``in_place``: into ``theta`` (a fresh array).

    x * 1.0 is x exactly in IEEE arithmetic (signed zeros, infinities and
    subnormals included), so on wide rows only the last column needs a
    product: a copy and one multiplied column instead of a full-length
    product (a wide stream's (k, d) vectors: 2^17 columns), and nothing at
    all without an intercept (``theta`` itself: the rounds replace it, never
    write it in place). Below ``COLUMN_ONLY_WIDTH`` columns the one product
    is cheaper and is kept. Otherwise a new array."""
    if constant is None:
        return theta
    if theta.shape[-1] < COLUMN_ONLY_WIDTH:
        return np.multiply(theta, scale, out=theta if in_place else None)
    out = theta if in_place else theta.copy()
    out[:, -1] *= constant
    return out


class MomentumFTRL(InPlaceArrays, ReplacedState, RoundBuffer):
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
        ``tail=None`` (default): ``HUBER_TAIL`` for the Huber loss, ``TAIL``
        for the others.
    step_rows : int or None, default=None
        Cap on the rows whose per-row step a round takes: lr =
        min(batch_size, step_rows) / (step_divisor R~^2); None: no cap (lr =
        batch_size / (step_divisor R~^2)). ``batch_size="auto"`` passes
        :func:`momentum_step_rows` (the module notes: "Public step").
    stable_rows : float or None, default=None
        Cap on the step after the noise rule's scale s: lr = min(rows / s,
        stable_rows) / (step_divisor R~^2), so that lr lambda stays inside heavy
        ball's bound however big a set round (the regressor's set
        ``batch_size`` passes ROUND_ROWS: lr lambda <= 2); None: no cap.
    stable_momentum : float or None, default=None
        The most momentum while ``stable_rows`` caps the step (None:
        ``momentum`` always). A wide regressor's stream passes
        :data:`~skdpol.online._registry.WIDE_REGRESSOR_MOMENTUM` (0.995): its
        big rounds keep the step of ``stable_rows`` rows, and the step a row
        gets after momentum, lr / (1 - beta), grows instead, inside heavy
        ball's bound 2 (1 + beta); with noise only as far past the cap as
        :func:`~._step_noise.capped_momentum` allows (0.995 amplified the
        released noise 10x). Below the cap ``momentum`` (the noise rule's
        0.95). A function of public quantities (b, s, the noise's presence).
    blt_buffers : int or None, default=None
        Buffers of a BLT of known horizon (None: its default, 4); a wide
        classifier's short streams take 1
        (:func:`~skdpol.online._registry.wide_blt_buffers`). Public: it
        shapes the noise, not its cost (the BLT's event is its multiplier).
    step_row_bound : float or None, default=None
        The R~ of the step (None: the rows' own bound R~); the centred stream
        (:mod:`._centred`) keeps the step of today's rows.
    curvature_cap : float or None, default=None
        kappa of the per-coordinate cap lr_j = kappa / h_j where lr h_j passes
        heavy ball's 2 (1 + beta), h_j read from the releases (:mod:`._curvature`;
        a wide classifier's: ``WIDE_CURVATURE_CAP``).
    """

    _curvature = None  # the per-coordinate step cap (._curvature; a wide classifier's)

    # a round reads its rows only through _margins and _gradient_sum (matvec /
    # rmatvec on lazy rows): sparse chunks come as SparseUnitRows, uncopied
    # (UnitSpace.lazy_rows); the centred subclass reads them itself and says no
    sparse_blocks = True

    def __init__(self, *, loss, n_features, alpha, row_bound, batch_size, horizon, noise,
                 rng, intercept=True, mechanism="blt", momentum=MOMENTUM, tail=None,
                 constant=CONSTANT, step_divisor=STEP_DIVISOR, step_rows=None, stable_rows=None,
                 blt_buffers=None, step_row_bound=None, stable_momentum=None,
                 curvature_cap=None):
        super().__init__(n_features=n_features, n_outputs=loss.n_outputs,
                         batch_size=batch_size, horizon=horizon)
        self.loss = loss
        self.alpha = float(alpha)
        self.momentum = float(momentum)
        self._momentum_pair = None if stable_momentum is None else (
            self.momentum, float(stable_momentum))  # (below the cap, at it)
        if tail is None:  # the Huber loss (a ``threshold``): the notes' "Averaging"
            tail = HUBER_TAIL if hasattr(loss, "threshold") else TAIL
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
            leaf_bound=self.batch_size * self.lipschitz, buffers=blt_buffers)
        # the step: min(b, step_rows) rows' worth (the notes' "Its cap"), its
        # divisor raised on noisy wide streams (:func:`noise_step_scale`)
        step_rows = self.batch_size if step_rows is None else min(self.batch_size, int(step_rows))
        self._step_rows, self._step_divisor = step_rows, float(step_divisor)
        self._stable_rows = None if stable_rows is None else float(stable_rows)
        # the step's R~ (the centred stream keeps today's: _centred notes)
        self._step_row_bound = self.row_bound if step_row_bound is None else float(
            step_row_bound)
        # an open Huber stream re-reads the rule as its rounds go (the notes'
        # "Open horizon"); a known horizon, and the classifier's losses, keep one step
        # (not without noise: the rule's scale is 1 there, the step b / (50 R~^2))
        self._noisy = bool(self._tree.noise_std_at([NOISE_MIN_ROUNDS])[0] > 0)
        self._open_rule = self.horizon is None and hasattr(loss, "threshold") and self._noisy
        self.learning_rate = self._step(self._noise_step_scale(loss, 1))
        self._theta = np.zeros(shape)
        self._velocity = np.zeros(shape)
        self._average = np.zeros(shape)
        self._last_release = np.zeros(shape)
        self._owned = True  # the iterates are this stream's alone (_kernel_post)
        if curvature_cap is not None:  # the wide classifier's (._curvature notes)
            self._curvature = CurvatureCap(float(curvature_cap), shape)

    def _adds_noise(self):
        """Whether the stream's mechanism adds noise (public: its calibration);
        read off the mechanism by a stream pickled before ``_noisy`` was kept."""
        noisy = self.__dict__.get("_noisy")
        if noisy is None:
            noisy = self._noisy = bool(self._tree.noise_std_at([NOISE_MIN_ROUNDS])[0] > 0)
        return noisy

    def _step(self, scale):
        """lr = min(b, step_rows) / (step_divisor x scale x R~^2), R~ the step's
        row bound (``step_row_bound``); with ``stable_momentum``, also the
        momentum of that step (the cap binds or not)."""
        # a Python bool (the scale may be a numpy float): it indexes the pair
        capped = bool(self._stable_rows is not None
                      and self._step_rows / scale > self._stable_rows)
        if self._momentum_pair is not None:  # at the cap: ._step_noise.capped_momentum
            self.momentum = capped_momentum(*self._momentum_pair, self._stable_rows,
                                            self._step_rows, scale, self._adds_noise()) \
                if capped else self._momentum_pair[0]
        if capped:
            # heavy ball's stability (the notes' "Its cap"): lr lambda <=
            # stable_rows / step_divisor (2 for ROUND_ROWS; 3.8 for a wide regressor's)
            return self._stable_rows / (self._step_divisor * self._step_row_bound**2)
        return self._step_rows / (self._step_divisor * scale * self._step_row_bound**2)

    def _noise_step_scale(self, loss, n_rounds=None):
        """:func:`noise_step_scale` for the Huber loss (its derivation is about
        clipped residuals); 1 for the classifier's losses. With a horizon: at
        the planned rounds (``n_rounds`` is not read). Open-ended: at
        :func:`open_rule_rounds` of ``n_rounds`` (default: the rounds done,
        at least 1), the notes' "Open horizon"."""
        if not hasattr(loss, "threshold"):
            return 1.0
        if self.horizon is not None:
            rounds = self.horizon
        else:
            rounds = open_rule_rounds(max(1, self.n_rounds) if n_rounds is None else n_rounds)
        noise_ratio = (self._tree.noise_std_at([rounds])[0]
                       / (2.0 * self.lipschitz))
        return noise_step_scale(self.n_features, noise_ratio,
                                rounds * self.batch_size, rounds,
                                base_divisor=STEP_DIVISOR)

    @property
    def published(self):
        # avg mapped back to the rows [u, 1] when read (once a call, not once
        # a round: one array operation less per round; the same product)
        return self._average * self._scale

    def _round(self, X, y):
        # A round is ~15 small array operations on (k, d) vectors plus two
        # gemv on its rows; at 100 rows a round their call overhead is the
        # cost, so each result is finished in place in the fresh array that
        # holds it (the same operations in the same order: the same numbers;
        # the state arrays are replaced, never written in place, as a
        # shallow checkpoint would need).
        theta = self._theta
        # margins of the rows v at W = theta * scale equal those of v~ at theta;
        # sparse chunks' rows take W's last column apart (``last``): W[:, :-1] is
        # theta[:, :-1] (x * 1.0 is x) and W[:, -1] the same products, no copy
        if self.constant is not None and hasattr(X, "takes_last"):
            last = theta[:, -1] * self.constant
            S = (X.matvec(theta[0], last=last[0]).reshape(-1, 1) if theta.shape[0] == 1
                 else X.matmul(theta.T, last=last))
        else:
            S = _margins(X, _column_scaled(theta, self.constant, self._scale))
        D = self.loss.derivative(S, y)
        # the gradient on v~ (curator state): leaf * scale, in its fresh array
        leaf = _column_scaled(_gradient_sum(X, D), self.constant, self._scale, in_place=True)
        tree = self._tree
        tree.add(leaf.ravel(), 1)
        # ---- from here on: post-processing of the released prefix sums
        # the release uncopied where the mechanism offers it (never written here)
        released = getattr(tree, "shared_release", tree.release)().reshape(theta.shape)
        t = self.n_rounds + 1  # this round's number (public)
        if self._open_rule and refresh_open_step(t):  # the notes' "Open horizon"
            self.learning_rate = self._step(self._noise_step_scale(self.loss, t))
        curvature = self._curvature
        if _KERNEL_WIDTH is not None and theta.size >= _KERNEL_WIDTH:
            self._kernel_post(released, theta, tree, t)
            return
        last = self._last_release
        g = np.subtract(released, last)
        g /= self.batch_size
        self._last_release = released
        if self.alpha:
            g += self.alpha * theta
        v_prev = self._velocity
        velocity = self.momentum * v_prev
        velocity += g
        self._velocity = velocity
        # per coordinate where the releases show a curvature past heavy ball's bound
        lr = self.learning_rate if curvature is None else curvature.rates(
            self.learning_rate, released, last, v_prev, self.alpha, self.momentum, tree, t,
            self.batch_size, self.intercept)
        step = lr * velocity
        theta = np.subtract(theta, step, out=step)
        self._theta = theta
        rho = min(1.0, 1.0 / (self.tail * (self.n_rounds + 1)))
        average = (1.0 - rho) * self._average
        average += rho * theta
        self._average = average

    def _kernel_post(self, released, theta, tree, t):
        # the numpy lines after this call in _round, in one compiled pass
        # (._momentum_kernel: the same operations in the same order), in
        # place: on copies where a checkpoint shares the iterates (the first
        # round after it), which the stream then owns
        velocity, average = self._velocity, self._average
        if not self._owned or velocity is theta or average is theta:
            velocity, theta, average = velocity.copy(), theta.copy(), average.copy()
        rho = min(1.0, 1.0 / (self.tail * (self.n_rounds + 1)))
        args = (released, self._last_release, float(self.batch_size), self.alpha,
                self.momentum, self.learning_rate, 1.0 - rho, rho, velocity, theta, average)
        if self._curvature is None:
            momentum_step(*args)
        else:  # the wide classifier's cap, compiled with the rest (._curvature)
            self._curvature.kernel_step(*args, tree, t, self.intercept)
        self._last_release = released
        self._velocity, self._theta, self._average = velocity, theta, average
        self._owned = True

    def __copy__(self):
        # ReplacedState's checkpoint shares the arrays: neither side may now
        # write them in place (_kernel_post's first round after a copy
        # copies them first)
        clone = self._disown(super().__copy__())
        if self._curvature is not None:  # its own cap (whose fields each round sets;
            clone._curvature = copy.copy(self._curvature)  # its arrays are replaced, shared)
        return clone

    def _publish(self):
        pass

    def event(self, n_rounds=None):
        """Cost of every release once ``n_rounds`` rounds are complete (default: now)."""
        return self._tree.event(self.n_rounds if n_rounds is None else n_rounds)
