"""The linear estimators' algorithms, one :class:`AlgorithmSpec` per name.

Everything that depends on *which* algorithm runs reads this table:
validation (the allowed names of each estimator's ``algorithm``), the
combination checks (:func:`skdpol.linear_model._algorithms.check_combination`),
construction (:func:`skdpol.online.make_stream` and
:func:`skdpol.online.fit_once` dispatch on ``family``) and the per-estimator
defaults ("auto" resolution, round size, ``alpha``, loss). A new algorithm
is one entry here and one builder.

Numbers only, and names of public parameters: no scikit-learn.
"""

import math
from dataclasses import dataclass, field

# Estimator kinds (the keys of the per-estimator fields below)
REGRESSOR, CLASSIFIER = "regressor", "classifier"

# The kinds of stream behind an algorithm (skdpol.linear_model._streams)
SUFFICIENT_STATISTIC, GRADIENT = "sufficient-statistic", "gradient"

# unit-space ridge weight of the regressor's PQFTL and gradient family
# (alpha=None): 1e-3 and 1e-4 measured alike on the generated stream (R^2 0.794
# at epsilon = 1)
REGRESSOR_ALPHA = 1e-3
# unit-space alpha of the classifier's tree and IGD algorithms (alpha=None);
# measured on Adult, one pass in chunks of 1,000 (benchmarks/bench_real.py): the
# best of 0.003-0.03 for 6,000 and 32,561 rows at epsilon 1 and inf
CLASSIFIER_ALPHA = 0.01
# the classifier's "ftrl" with a known horizon of n rows: alpha = min(CLASSIFIER_ALPHA,
# FTRL_ALPHA_SCALE / sqrt(n)). FTRL on linearised losses wants a total regulariser
# growing like sqrt(n) (McMahan 2017, "A survey of algorithms and analysis for
# adaptive online learning", section 3), i.e. a per-row alpha ~ 1/sqrt(n); the
# horizon is public, and for the logistic losses the gradient bound (the
# sensitivity) does not depend on alpha. The constant is the Adult optimum at
# 32,561 rows (alpha ~ 0.004 in the sweep 0.002-0.01 at epsilon 0.5, 1, 2, inf); it
# also gains 1.5 (binary) and 3 (3 classes) points on the generated 180,000-row
# stream at epsilon 1 and inf (docs/logistic.md). Below ~4,900 rows the rule gives
# CLASSIFIER_ALPHA back.
FTRL_ALPHA_SCALE = 0.7

# the regressor's "ftrl" (Huber loss, an initial regulariser, averaging:
# skdpol/online/_ftal.py): rows a round of batch_size="auto". Its step on a
# round's mean is capped by the curvature (2 / R^2), so more, smaller rounds
# go further in one pass: King County / wine R^2 at epsilon 1 (2 seeds) 0.73 /
# 0.17 with 20 rows, 0.68 / 0.12 with 50, 0.58 / 0.08 with 100, 0.73 / 0.15
# with 10 (noisier)
FTRL_REGRESSOR_ROUND = 20

# the classifier's "ls" (least squares on coded labels): a per-row ridge added
# to the ridge from the public noise level, only so that epsilon = inf and a
# singular Gram stay defined (the prototype's value; docs/benchmarks/classifier_stream.md)
LS_ALPHA = 1e-6
# "auto" picks "ls" for a classifier stream of at most this many features
# (n_features_in_, public), a first-order stream above (WIDE_AUTO_STREAM): "ls" keeps d x d sums (and the BLT's
# buffers of them) and solves a d x d eigenproblem per release, so its memory
# grows like d^2 and its time per call like d^3, where ftrl's are linear in d.
# Measured for one call of 1,000 rows, one BLAS thread
# (docs/benchmarks/classifier_stream.md): d = 300: 0.05 s, 14 MB traced;
# d = 1,000: 0.7 s, 134 MB; d = 2,000: 4.9 s, 520 MB (ftrl: 0.01 s, 1 MB).
# 1,000 keeps a call under a second and the state near 100 MB.
LS_AUTO_MAX_FEATURES = 1_000

# ---- wide classifier streams (issue 32): more than LS_AUTO_MAX_FEATURES features.
# "auto" takes "ftrl-momentum" there (measured at 2^17 hashed CSR columns, 100,000
# rows, 3 seeds: docs/benchmarks/wide.md), and "ftrl-momentum" on such rows
# (chosen or "auto") takes the rules below. Each reads public quantities only:
# n_features, the horizon in rows, epsilon.
WIDE_AUTO_STREAM = "ftrl-momentum"
# batch_size="auto": at least n_features / WIDE_COLUMNS_PER_ROW rows a round. A
# round costs O(d) vector work whatever its rows (the prefix-sum mechanism's
# update and noise, the momentum and averaging), a row O(its nonzeros); rounds
# growing like d keep that per-round work a bounded share of a row's cost.
# At 2^17 columns: 2,048 rows (2,000 under the cap below; 1,000 measured 0.675-0.694
# at epsilon = inf, seeds 0-2, and ran 0.6-0.75x as fast); at 10,000 dense
# columns, 157 rows (accuracy 0.745-0.752 at epsilon = inf, 20,000 rows,
# against 0.736-0.743 for rounds of 400).
WIDE_COLUMNS_PER_ROW = 64
# ... but at least WIDE_MIN_ROUNDS rounds over a known horizon (fewer, larger
# steps lose accuracy: at 2^17 columns and 100,000 rows, epsilon = inf, rounds
# of 4,000 (25 rounds) reached 0.62-0.64 against 0.686-0.704 for rounds of 2,000,
# seeds 0-2). With noise the balance differs: WIDE_NOISY_ROUNDS below.
WIDE_MIN_ROUNDS = 50
# ... and at finite epsilon, rounds of at least horizon / (WIDE_NOISY_ROUNDS x
# max(1, epsilon)) rows, at most n_features / WIDE_NOISY_COLUMNS_PER_ROW (never
# below the rule above): with noise, fewer, larger rounds win twice. A round's
# mean gradient carries the prefix sums' noise over b rows (the leaf
# sensitivity does not grow with b), and each round draws d noise values and
# runs the BLT's O(d) step (~4 ms at 2^17 columns against ~0.5 ms for the
# noiseless round's vector work), so the rows per second grow almost like b.
# Measured (benchmarks/bench_wide_rounds.py), one pass, test accuracy, medians
# (seeds), rows a round (rounds):
#   2^17 generated (benchmarks/bench_wide.py's rows), 100,000 rows, seeds 0-4 at
#   epsilon 1, 0-2 otherwise: epsilon 1: 2,000 (50) 0.566, 2,500 0.565, 3,334
#   0.565, 4,000 0.584, 5,000 (20) 0.592, 6,667 (15) 0.596, 10,000 (10) 0.571
#   (0.50-0.59: too few steps); epsilon 0.5: 2,000 0.566, 5,000 0.573;
#   epsilon 2: 2,000 0.585, 3,334 0.605, 5,000 0.604; epsilon 4: 2,000 0.627,
#   3,334 0.629, 5,000 0.611; epsilon = inf: 2,000 0.693, 4,000 0.619.
#   Adult through FeatureHasher (2^17 columns; 6 numeric columns scaled by their
#   public ranges, 8 categorical tokens; data_norm sqrt(14)), 32,561 rows in
#   chunks of 5,000, seeds 0-4: epsilon 1: 651 (50) 0.8397, 1,000 0.8412, 1,628
#   (20) 0.8421, 3,257 (10) 0.8389; epsilon 0.5: 651 0.8325, 1,628 0.8358;
#   epsilon 2: 651 0.8448, 1,628 0.8423; epsilon 4: 651 0.8460, 1,628 0.8426;
#   epsilon = inf: 651 0.8469, 1,628 0.8437. The same at 2^12 columns, epsilon
#   1: 100 (326, the rule before) 0.8393, 651 (50) 0.8418, 1,628 (20) 0.8423;
#   the rule's 512 (64, one BLT buffer) 0.8406. At d = 10,000 dense (20,000
#   rows) every round size stayed at chance at epsilon = 1: there the rule
#   (rounds of 1,000) only runs faster.
# So about 20 rounds at epsilon <= 1 and more as epsilon grows (the noise
# counts less), up to the noiseless rule's: 20 x max(1, epsilon) rounds. The cap
# d / 8 keeps a round's rows growing like d, as the rule above, only with the
# noisy round's ~8x larger O(d) cost (and bounds the rounds of long horizons:
# the 20 rounds were measured up to 100,000 rows). With the one-buffer BLT
# below, the 2^17 stream's rows per CPU second at epsilon 1 grew 2.1-2.7x
# (0.12-0.15x SGD's to 0.30-0.40x) and its accuracy 0.560 / 0.566 / 0.572 ->
# 0.581 / 0.606 / 0.630 (seeds 0-2, docs/benchmarks/wide.md).
WIDE_NOISY_ROUNDS = 20
WIDE_NOISY_COLUMNS_PER_ROW = 8
# An open-ended stream (horizon=None) keeps the noiseless d / 64 at every
# epsilon: it cannot count its rounds, and no round size read off d and
# epsilon alone won at every length (benchmarks/bench_open_wide.py,
# docs/benchmarks/open_wide.md; one open pass in chunks of 10,000 scored at
# 10^4 ... 10^6 rows, paired against d / 64 over 6 seeds). The candidate "the
# noisy rounds of a 100,000-row horizon" (5,000 rows at 2^17, epsilon <= 1;
# 1,024 at 2^13) gained on the generated 2^17 rows at epsilon 1 (+0.017 at
# 10^5 rows, 6 seeds of 6; +0.004 at 3 x 10^5; +0.007 at 10^6) in 0.6x the
# CPU time, but cost Adult hashed to 2^17 (32,561 rows, 6 rounds) 0.017 at
# epsilon 1 and 0.011 at 0.5, and the generated 2^13 rows 0.004-0.011 at
# 10^5-3 x 10^5 rows; the sizes that kept Adult (<= 3,000) gained nothing on
# the generated rows (paired medians within +-0.01). Pass the horizon when it
# is known, or a batch_size (public) for a long open stream.
# the step's divisor (lr = b / (divisor R~^2), skdpol/online/_momentum.py) of a
# wide classifier: the logistic loss's curvature is at most R~^2 / 4, a quarter
# of the Huber bound the default 50 was set for. At 2^17 columns in rounds of
# 2,000, epsilon = inf: 12.5 / 25 / 50 gave accuracy 0.677 / 0.686 / 0.666 (seed 0);
# 25 gave 0.686 / 0.693 / 0.704 on seeds 0-2 against one pass of SGDClassifier's
# 0.687 / 0.690 / 0.703. At epsilon = 1, 25 and 50 measured alike (0.555-0.585 and
# 0.557-0.591, the BLT, seeds 0-2).
WIDE_STEP_DIVISOR = 25.0
# ... and that step is capped per coordinate where the released gradients show
# a curvature past heavy ball's bound (skdpol/online/_curvature.py: lr_j =
# kappa / h_j where lr h_j > 2 (1 + beta), h_j a diagonal secant of the
# releases on rounds 2-5 and every 8th, post-processing): rows with a column
# shared by most rows oscillated at lr lambda up to b / 100. Measured
# (docs/benchmarks/wide_stability.md, 2^17 columns, 100,000 rows, seeds 0-2,
# epsilon = inf; one pass of SGD in brackets): a token of value 0.8 in every
# row 0.574 / 0.530 / 0.624 -> 0.634 / 0.624 / 0.655 (0.636 / 0.634 / 0.650),
# of 0.5 0.627 / 0.604 / 0.642 -> 0.670 / 0.659 / 0.683; plain hashed rows
# 0.686 / 0.693 / 0.704 -> 0.686 / 0.693 / 0.703; Adult hashed (5 seeds)
# median 0.8469 -> 0.8465 at epsilon = inf, 0.8413 -> 0.8413 at 1.
WIDE_CURVATURE_CAP = 2.0
# mechanism="auto" of a wide stream takes the tree (O(d) work a round, against
# the BLT's O(buffers x d)) where its prefix sums' noise std is at most this
# factor above the BLT's at the same epsilon for the planned rounds (always at
# epsilon = inf: neither adds noise). With noise the BLT's std is 1.8-2.5x lower
# for 10 to 4,096 rounds (prefix_noise_ratio), so it stays. (At 2^17 columns,
# epsilon = 1, rounds of 2,000, the float sampler, seeds 0-2, the tree measured
# 0.556-0.586 against the BLT's 0.555-0.585, both near chance: the rule follows
# the noise std, which is what the two differ in.)
WIDE_TREE_NOISE_RATIO = 1.25


# ---- wide regressor streams (issue 32): "ftrl-momentum" (the regressor's
# stream at every width) on more than LS_AUTO_MAX_FEATURES features. Its rounds
# grow with d for the same reason as the classifier's (a round's O(d) vector
# work against its rows' O(nonzeros)); its step cannot simply grow with them.
# The step is lr = b / (50 s R~^2) (s the noise rule's scale,
# skdpol.online._step_noise), and heavy ball on the Huber loss is stable only
# for lr lambda < 2 (1 + beta), lambda <= R~^2 on rows that share a direction
# (skdpol/online/_momentum.py notes, "Its cap"). Measured (2^17 CSR,
# bench_wide.py's rows, 100,000 rows, epsilon = inf, seed 0; main's rounds of
# 100: R^2 0.373): rounds of 2,048 with the step of 100 rows 0.084, of 190
# rows 0.118, uncapped (lr lambda up to 41) 0.306; on the same rows with one
# token in every row (90 % of a row's norm, targets of mean 2), uncapped
# rounds of 512 fell from 0.199 (rounds of 100) to 0.023 and of 2,048 to
# -1.6 to -22. So the step stays capped (WIDE_REGRESSOR_STABLE_ROWS) and where
# the cap binds the momentum grows instead (WIDE_REGRESSOR_MOMENTUM): the step
# a row gets after momentum is lr / (1 - beta), and the bound 2 (1 + beta)
# barely moves.
# batch_size="auto": at finite epsilon ceil(d / (WIDE_REGRESSOR_COLUMNS_PER_ROW
# x min(max(1, epsilon / 2), 2))) rows (each round draws d noise values and
# runs the BLT's step: few, big rounds; at epsilon <= 2 the step b / (50 s
# R~^2) stays under the cap, s being large, and from epsilon 4 on the cap
# binds and half the rows a round, twice the steps, recover main's R^2); at
# epsilon = inf ceil(d / WIDE_REGRESSOR_FREE_COLUMNS_PER_ROW) (a noiseless
# round is ~0.5 ms at 2^17 with the tree, and the cap binds: more, smaller
# steps). All at most horizon / WIDE_MIN_ROUNDS and never below the narrow
# rule (momentum_round). At 2^17 over 100,000 rows: 2,000 (epsilon <= 2), 1,024
# (epsilon >= 4) and 512 rows (epsilon = inf); at d = 10,000: 157, 79 (the
# narrow 100) and 100. Measured at 2^17, seeds 0 / 1 (main's rounds of 100 in
# brackets): epsilon 4, rounds of 2,000 0.141 / 0.151, 1,024 0.152 / 0.169
# (0.152 / 0.162); epsilon 8, 2,000 0.143 / 0.154, 1,024 0.223 / 0.242, 512
# 0.202 / 0.215 (0.198 / 0.205). Rounds of 1,024 run at ~150,000-165,000 rows
# per CPU second there (four BLT buffers past 64 rounds), 2,000 at ~350,000.
WIDE_REGRESSOR_COLUMNS_PER_ROW = 64
WIDE_REGRESSOR_FREE_COLUMNS_PER_ROW = 256
# the cap on a wide regressor's step after the noise scale (``stable_rows``):
# that of 190 rows, lr lambda <= lr R~^2 = 3.8 < 2 (1 + WIDE_REGRESSOR_MOMENTUM)
# = 3.99 on any rows (the narrow set rounds' cap, ROUND_ROWS, keeps 2)
WIDE_REGRESSOR_STABLE_ROWS = 190
# heavy ball's momentum of a wide regressor stream where that cap binds (0.95
# elsewhere). At 2^17, epsilon = inf, rounds of 512 with the step of 190 rows:
# beta = 0.95 / 0.98 / 0.99 / 0.995: R^2 0.252 / 0.321 / 0.358 / 0.376 (seed
# 0; the step of 150 rows: 0.230 / 0.296 / 0.332 at 0.95 / 0.98 / 0.99;
# 0.99 / 0.995 on seeds 0-2: 0.358 / 0.376 / 0.395 and 0.376 / 0.396 / 0.409,
# main's rounds of 100 0.373 / 0.389 / 0.415); at epsilon 8 (rounds of 2,000)
# 0.148 / 0.151 (seeds 0-1). The shared-token rows above stay stable at 0.995
# (0.209 / 0.164 with targets of mean 0 / 2, against 0.201 / 0.199 for
# main's rounds of 100; 2 (1 + beta) = 3.99 > 3.8). Below the cap the noise rule sets the step, and its
# balance was derived for 0.95: 0.99 there gained at 2^17, epsilon 1 (rounds
# of 2,048: 0.087 / 0.103 / 0.138 against 0.073 / 0.094 / 0.121, seeds 0-2)
# but cost d = 10,000 dense over 20,000 rows (rounds of 157: -0.061 / -0.077
# against -0.001, main -0.002: the released noise, amplified 5x).
# With noise the momentum at the cap is 0.995 only far past it
# (skdpol/online/_step_noise.capped_momentum): 1 - beta = 0.05 (190 s / b)^2,
# 0.95 at the cap's edge (b / s = 190) and 0.995 from b / s ~ 600 on; without
# noise 0.995. Taking 0.995 as soon as the cap bound amplified the released
# noise 10x (1 / (1 - beta) = 200 rounds against 20), and known horizons
# whose rounds grew past 190 s rows fell as the horizon grew: 2^13 columns,
# epsilon 4, horizon 300,000 (the narrow rule's rounds of 300, s = 1.43) R^2
# 0.171 / 0.144 / 0.188 (seeds 0-2) against 0.626 at 100,000 rows (rounds of
# 100) and the open stream's 0.838; epsilon 1 over 1,000,000 rows (rounds
# of 1,000) 0.287; 2^17, epsilon 1, 1,000,000 rows (rounds of 2,048, s = 10.2,
# b / s = 201) -0.563. With capped_momentum: 0.931 / 0.924 / 0.934, 0.936 and
# 0.299 (docs/benchmarks/open_wide.md, "The regressor"). Its cost is where
# 0.995's bigger step after momentum helped a stream far from converged
# (2^17 over 100,000-300,000 rows at epsilon 8: known horizons 0.03 / 0.01
# lower, the open stream 0.06 at 300,000 rows; capped_momentum's notes).
WIDE_REGRESSOR_MOMENTUM = 0.995


def wide_stream(estimator, n_features, algorithm):
    """Whether a stream of ``algorithm`` for ``estimator`` (a kind) on rows of
    ``n_features`` features (None: not known yet) takes the wide rules:
    "ftrl-momentum" on more than LS_AUTO_MAX_FEATURES features (the
    classifier's and the regressor's own rules)."""
    return (algorithm == WIDE_AUTO_STREAM and estimator in (CLASSIFIER, REGRESSOR)
            and n_features is not None and n_features > LS_AUTO_MAX_FEATURES)


def wide_regressor_round(n_features, horizon_rows, epsilon=math.inf):
    """Rows per round of ``batch_size="auto"`` for a wide regressor stream
    (before the narrow rule's floor, which the caller applies):
    ceil(n_features / (WIDE_REGRESSOR_COLUMNS_PER_ROW x min(max(1, epsilon /
    2), 2))) at finite ``epsilon``, ceil(n_features /
    WIDE_REGRESSOR_FREE_COLUMNS_PER_ROW) at epsilon = inf, at most horizon /
    WIDE_MIN_ROUNDS.

    >>> [wide_regressor_round(2**17, 100_000, e) for e in (1.0, 3.0, 8.0, math.inf)]
    [2000, 1366, 1024, 512]
    """
    if math.isinf(epsilon):
        rows = -(-int(n_features) // WIDE_REGRESSOR_FREE_COLUMNS_PER_ROW)
    else:
        per_row = WIDE_REGRESSOR_COLUMNS_PER_ROW * min(max(1.0, float(epsilon) / 2.0), 2.0)
        rows = math.ceil(int(n_features) / per_row)
    if horizon_rows is not None:
        rows = min(rows, int(horizon_rows) // WIDE_MIN_ROUNDS)
    return max(rows, 1)


def wide_round(n_features, horizon_rows, epsilon=math.inf):
    """Rows per round of ``batch_size="auto"`` for a wide stream (before the
    narrow rule's floor, which the caller applies): n_features /
    WIDE_COLUMNS_PER_ROW, at most horizon / WIDE_MIN_ROUNDS; at finite
    ``epsilon`` and a known horizon, at least horizon / (WIDE_NOISY_ROUNDS x
    max(1, epsilon)) but not past n_features / WIDE_NOISY_COLUMNS_PER_ROW."""
    rows = -(-int(n_features) // WIDE_COLUMNS_PER_ROW)
    if horizon_rows is not None:
        rows = min(rows, int(horizon_rows) // WIDE_MIN_ROUNDS)
        if not math.isinf(epsilon):
            rounds = math.ceil(WIDE_NOISY_ROUNDS * max(1.0, float(epsilon)))
            noisy = min(int(horizon_rows) // rounds,
                        -(-int(n_features) // WIDE_NOISY_COLUMNS_PER_ROW))
            rows = max(rows, noisy)
    return max(rows, 1)


# a wide stream's BLT takes 1 buffer instead of 4 for at most this many planned
# rounds: its step is O(buffers x d) (at 2^17 columns ~1.85 ms a round with 4
# buffers, ~0.8 ms with 1, the noise draws excluded), and over short horizons
# one buffer is nearly as good (the stored designs, sensitivity x RMSE of the
# prefix sums at 20 / 32 / 50 / 64 / 100 rounds: 1.840 / 1.976 / 2.135 / 2.216 /
# 2.390 against 1.831 / 1.964 / 2.107 / 2.180 / 2.325 for 4 buffers: +0.5 % at
# the 20 rounds of WIDE_NOISY_ROUNDS, +1.7 % at 64). Measured at the rule's
# rounds, one buffer against four (medians, seeds 0-4): 2^17 generated,
# epsilon 1: 0.604 / 0.592; Adult hashed to 2^17, epsilon 0.5 / 1 / 2: 0.8391 /
# 0.8422 / 0.8448 against 0.8358 / 0.8421 / 0.8448. The event is the BLT's
# multiplier whatever its buffers.
WIDE_ONE_BUFFER_ROUNDS = 64


def wide_blt_buffers(n_rounds):
    """Buffers of a wide stream's BLT over ``n_rounds`` planned rounds (None:
    open-ended, the BLT's epochs keep their default): 1 up to
    WIDE_ONE_BUFFER_ROUNDS rounds, else None (the default, 4)."""
    if n_rounds is not None and n_rounds <= WIDE_ONE_BUFFER_ROUNDS:
        return 1
    return None


def wide_mechanism(epsilon, n_rounds, noise_ratio):
    """``mechanism="auto"`` of a wide stream where the narrow rule gives the BLT:
    "tree" at epsilon = inf or where ``noise_ratio(n_rounds)`` (the tree's
    prefix-sum noise std over the BLT's at the same epsilon) is at most
    WIDE_TREE_NOISE_RATIO, else "blt". ``n_rounds``: planned rounds (None:
    open-ended, where the BLT's epochs are far ahead of the open tree)."""
    if math.isinf(epsilon):
        return "tree"
    if n_rounds is None or noise_ratio(n_rounds) > WIDE_TREE_NOISE_RATIO:
        return "blt"
    return "tree"


# the regressor's default alpha for most algorithms, the classifier's for most
_ALPHA = {REGRESSOR: REGRESSOR_ALPHA, CLASSIFIER: CLASSIFIER_ALPHA}
# noisy GD: unpenalised for both (its finite number of steps regularises; a
# penalty of 1e-3 cost the classifier 0.7 point on Adult)
_NO_PENALTY = {REGRESSOR: 0.0, CLASSIFIER: 0.0}
_LOSS = {REGRESSOR: "squared", CLASSIFIER: "logistic"}


@dataclass(frozen=True)
class AlgorithmSpec:
    """What an estimator needs to know about one algorithm name.

    Parameters
    ----------
    name : str
        The value of the estimators' ``algorithm`` parameter.
    kind : {"sufficient-statistic", "gradient"}
        The stream behind it: PQFTL's private sums, or a gradient-family
        algorithm object (:func:`skdpol.online.make_stream`).
    family : str
        How :func:`~skdpol.online.make_stream` builds it: "pqftl" (built by
        the estimator), "noisy-gd", "output-perturbation", "prefix-sum",
        "mutual-information", "least-squares".
    estimators : frozenset of str
        The estimator kinds ("regressor", "classifier") that accept the name.
    needs_delta : bool, default=False
        Refused with ``delta=0`` (its steps compose like sqrt(K) only under
        Gaussian noise).
    paper : str or None, default=None
        None: ``noise_calibration="paper"`` is defined; otherwise the reason
        it is not (the refusal says it).
    paper_pure_dp : bool, default=False
        The paper calibration also holds with ``delta=0`` (seed 001's TBAP
        is pure DP).
    bandit : bool or None, default=False
        ``feedback="bandit"`` is defined; None: ``feedback`` is not read (and
        not checked) on this path.
    auto_round : dict, default={}
        Per estimator kind, the round of ``batch_size="auto"`` in a stream:
        "call" (one round per call), "row" (per-row rounds), "momentum"
        (:func:`skdpol.online._momentum.momentum_round` of the horizon), an
        int (that many rows a round) or, when absent, "gradient" (even
        rounds of at most GRADIENT_ROUND rows).
    alpha : dict
        Per estimator kind, the unit-space ``alpha`` of ``alpha=None``.
    alpha_horizon_scale : dict, default={}
        Per estimator kind: with a known horizon of n rows, ``alpha=None`` is
        ``min(alpha, scale / sqrt(n))``.
    loss : dict
        Per estimator kind: "squared", "huber" (noisy GD's clipped
        residuals) or "logistic" (binary or multinomial by the classes; for
        "ls", the loss its least squares approximates to second order).
    lazy_rows : frozenset of str, default=frozenset()
        Estimator kinds whose rows for this algorithm stay uncopied
        (:class:`~skdpol.linear_model._rows.UnitRows`: rounds that only take
        gradient sums, or "ls"'s Gram of the caller's rows).
    one_release : {"stream", "pol", "averaged"} or None
        ``fit``'s single release (:func:`~skdpol.online.fit_once`): run the
        stream over all rows, POL over IGD, or the averaged GIGA iterate.
        None: the estimator's own (PQFTL's single noisy copy of the sums).
    stream_fit : frozenset of str, default=frozenset()
        Estimator kinds whose ``fit`` is one pass of the stream (its last
        model, ``one_release="stream"``) whatever ``one_release`` says
        (the regressor's "ftrl": POL over IGD is the seeds' release, far
        below the mean on the real tables).
    fit_per_row : frozenset of str, default=frozenset()
        Estimator kinds whose ``fit`` runs this algorithm's POL with per-row
        rounds (IGD's squared-loss step bound holds for one row a round).
    comparison_only : frozenset of str, default=frozenset()
        Estimator kinds for which the name is there for comparison with the
        seed papers (choosing it warns).
    mutual_information : bool, default=False
        Publishes seed 000's mutual-information bound.
    """

    name: str
    kind: str
    family: str
    estimators: frozenset
    loss: dict
    alpha: dict
    needs_delta: bool = False
    paper: str | None = None
    paper_pure_dp: bool = False
    bandit: bool | None = False
    auto_round: dict = field(default_factory=dict)
    alpha_horizon_scale: dict = field(default_factory=dict)
    lazy_rows: frozenset = frozenset()
    one_release: str | None = None
    stream_fit: frozenset = frozenset()
    fit_per_row: frozenset = frozenset()
    comparison_only: frozenset = frozenset()
    mutual_information: bool = False

    def fit_release(self, estimator):
        """``fit``'s single release for ``estimator`` (a kind): ``one_release``,
        or "stream" for the kinds in ``stream_fit``."""
        return "stream" if estimator in self.stream_fit else self.one_release

    def default_alpha(self, estimator, horizon):
        """``alpha=None`` for ``estimator`` (a kind) over ``horizon`` rows (or None)."""
        alpha = self.alpha[estimator]
        scale = self.alpha_horizon_scale.get(estimator)
        if scale is not None and horizon is not None:
            return min(alpha, scale / math.sqrt(horizon))
        return alpha


_BOTH = frozenset({REGRESSOR, CLASSIFIER})
_REGRESSOR = frozenset({REGRESSOR})

ALGORITHMS = {spec.name: spec for spec in (
    AlgorithmSpec(
        "ftl", SUFFICIENT_STATISTIC, "pqftl", frozenset({REGRESSOR}), loss=_LOSS,
        alpha=_ALPHA, bandit=None, auto_round={REGRESSOR: "call"}),
    AlgorithmSpec(
        "ftrl", GRADIENT, "prefix-sum", _BOTH,
        loss={REGRESSOR: "huber", CLASSIFIER: "logistic"}, alpha=_ALPHA,
        paper_pure_dp=True, auto_round={REGRESSOR: FTRL_REGRESSOR_ROUND},
        alpha_horizon_scale={CLASSIFIER: FTRL_ALPHA_SCALE},
        lazy_rows=frozenset({CLASSIFIER}), one_release="pol", stream_fit=_REGRESSOR),
    AlgorithmSpec(
        "ftal", GRADIENT, "prefix-sum", _BOTH, loss=_LOSS, alpha=_ALPHA,
        paper_pure_dp=True, lazy_rows=frozenset({CLASSIFIER}), one_release="pol",
        fit_per_row=_REGRESSOR, comparison_only=_REGRESSOR),
    AlgorithmSpec(
        "igd", GRADIENT, "output-perturbation", _BOTH, loss=_LOSS, alpha=_ALPHA,
        auto_round={REGRESSOR: "row"}, one_release="pol", fit_per_row=_REGRESSOR,
        comparison_only=_REGRESSOR),
    AlgorithmSpec(
        "giga", GRADIENT, "output-perturbation", _BOTH, loss=_LOSS, alpha=_ALPHA,
        one_release="averaged", comparison_only=_REGRESSOR),
    AlgorithmSpec(
        "mi-ogd", GRADIENT, "mutual-information", _BOTH, loss=_LOSS, alpha=_ALPHA,
        paper="seed 000 states a mutual-information bound, not a noise formula",
        bandit=True, auto_round={REGRESSOR: "row"}, one_release="stream",
        fit_per_row=_REGRESSOR, comparison_only=_REGRESSOR,
        mutual_information=True),
    AlgorithmSpec(
        "noisy-gd", GRADIENT, "noisy-gd", _BOTH, loss={REGRESSOR: "huber", CLASSIFIER: "logistic"},
        alpha=_NO_PENALTY, needs_delta=True, paper="it is not a seed algorithm",
        auto_round={REGRESSOR: "call"}, one_release="stream"),
    # DP-FTRL with heavy-ball momentum (skdpol/online/_momentum.py): the
    # issue-31 prototypes' one-pass winner for regression; built, one pass at
    # epsilon 1 (5 seeds): King County R^2 0.755 vs fit 0.764 (0.751 at
    # epsilon 0.5), wine 0.210 vs 0.207 (0.217 at epsilon 0.5 since fit's
    # Huber schedule; docs/benchmarks/stream.md; over 20 seeds it is just
    # below fit at 0.5 on both: docs/benchmarks/stream_20seeds.md). The
    # regressor's stream now centres its rows privately first where a
    # public rule allows (skdpol/online/_centred.py): one pass at epsilon 1,
    # 20 seeds, King County 0.764 and wine 0.201 against fit at 0.5's 0.757
    # and 0.197 (docs/regressor.md, "The default stream").
    # Named after the "ftrl" it extends: the same released gradient prefix
    # sums, with momentum and averaging as their post-processing. Its fit is
    # the same one pass over the rows (the last model published): a stream's
    # own guarantee, for users who want that model; noisy-gd is the better fit
    AlgorithmSpec(
        "ftrl-momentum", GRADIENT, "momentum", _BOTH,
        loss={REGRESSOR: "huber", CLASSIFIER: "logistic"}, alpha=_NO_PENALTY,
        paper="it is not a seed algorithm",
        auto_round={REGRESSOR: "momentum", CLASSIFIER: "momentum"},
        lazy_rows=_BOTH, one_release="stream"),
    AlgorithmSpec(
        "ls", SUFFICIENT_STATISTIC, "least-squares", frozenset({CLASSIFIER}),
        loss={CLASSIFIER: "logistic"}, alpha={CLASSIFIER: LS_ALPHA},
        paper="it is not a seed algorithm", auto_round={CLASSIFIER: "call"},
        lazy_rows=frozenset({CLASSIFIER}), one_release="stream"),
)}

# "auto" per estimator kind: (stream, fit, fit with delta=0 or the paper calibration,
# stream with delta=0 or the paper calibration). The regressor's stream is
# "ftrl-momentum" (issue 31: one pass at epsilon 1 as good as fit at 0.5 on
# the real tables, docs/benchmarks/stream.md) where the noise is Gaussian and
# tightly calibrated; with pure DP or the seeds' calibration, where it was not
# measured (and the paper calibration is not defined for it), PQFTL as before.
# The classifier's stream is "ls" (docs/benchmarks/classifier_stream.md), also
# under pure DP (its tree takes L2-Laplace nodes); auto_stream falls back to
# "ftrl" for the paper calibration or rows too wide for its d x d sums.
AUTO = {REGRESSOR: ("ftrl-momentum", "noisy-gd", "ftl", "ftl"),
        CLASSIFIER: ("ls", "noisy-gd", "igd", "ls")}

# the stream of "auto" under pure DP (delta = 0) with the tight calibration,
# where it is not AUTO's pure-or-paper stream. The regressor's is
# "ftrl-momentum" (its tree takes Laplace nodes, an existing mechanism): PQFTL's
# leaf holds the d (d + 1) / 2 + d coordinates of (V, u), and pure-DP noise per
# coordinate grows with their number (L2-Laplace ~ sqrt(k) x the leaf
# sensitivity; the discrete sampler's per-coordinate Laplace on the L1 bound
# sqrt(2 k) x), where the Gaussian's does not; its ridge release then fails
# shrink_ridge's test and publishes the zero model (King County, wine and
# bench_noise.py's d = 10 stream, epsilon 0.5-4: R^2 below 0 on every seed),
# while the first-order leaf has d + 1 coordinates and learns
# (docs/benchmarks/pure_stream.md). The paper calibration keeps PQFTL (not
# defined for "ftrl-momentum").
PURE_STREAM = {REGRESSOR: "ftrl-momentum"}

# the stream of "auto" where AUTO's is not defined or too wide: (name, most
# features a sufficient-statistic AUTO stream takes, or None). The classifier's "ls" has no paper
# calibration and keeps d x d sums (LS_AUTO_MAX_FEATURES): above that width
# auto_stream takes WIDE_AUTO_STREAM ("ftrl-momentum"), or this fallback under
# pure DP. To go back to "ftrl" everywhere, set AUTO's classifier stream to "ftrl".
AUTO_STREAM_FALLBACK = {CLASSIFIER: ("ftrl", LS_AUTO_MAX_FEATURES)}

# ... and over a planned horizon of at least LARGE_HORIZON rows (public), the
# stream of AUTO_LARGE_STREAM instead (with delta > 0: it was not measured
# under pure DP). The classifier's "ls" sums a d x d Gram of every row, O(n d^2) against
# SGD's O(n d): at d = 54 no shell makes it reach SGDClassifier's rows per
# second (docs/benchmarks/speed_memory.md: its floor is ~0.84x); past
# 100,000 rows "ftrl-momentum" in rounds of 500-1,000 rows runs at 1.2-1.6x
# and scores at or above "ls" (docs/benchmarks/classifier_large.md:
# generated rows of d = 10-200, short rows, a 12 % class, rows near one
# direction, Adult and credit default drawn to 200,000 rows). Every real
# table of the benchmarks is shorter: "ls" stays there (on credit default at
# its 24,000 rows it beats "ftrl-momentum" by 0.012 AUC, docs/benchmarks/stream.md).
LARGE_HORIZON = 100_000
AUTO_LARGE_STREAM = {CLASSIFIER: "ftrl-momentum"}


def auto_stream(estimator, n_features, calibration, pure=False, horizon=None):
    """The stream ``algorithm="auto"`` runs for ``estimator`` (a kind) on rows of
    ``n_features`` features (None: not known yet) under the noise
    ``calibration``, with ``pure`` for ``delta=0``, over a planned ``horizon``
    of rows (None: open): public quantities only."""
    choice = AUTO[estimator]
    name = choice[3] if pure or calibration == "paper" else choice[0]
    if calibration != "paper":
        if pure and estimator in PURE_STREAM:
            return PURE_STREAM[estimator]
        long_horizon = horizon is not None and horizon >= LARGE_HORIZON
        if not pure and long_horizon and estimator in AUTO_LARGE_STREAM:
            name = AUTO_LARGE_STREAM[estimator]
    fallback = AUTO_STREAM_FALLBACK.get(estimator)
    if fallback is None:
        return name
    other, max_features = fallback
    # the width rule is for d x d state only (a first-order AUTO ignores it)
    too_wide = (ALGORITHMS[name].kind == SUFFICIENT_STATISTIC and n_features is not None
                and max_features is not None and n_features > max_features)
    if calibration == "paper" and ALGORITHMS[name].paper is not None:
        return other
    if too_wide:
        # "ftrl-momentum" (WIDE_AUTO_STREAM) needs delta > 0; under pure DP,
        # where it was not measured, "ftrl" as before
        return other if pure else WIDE_AUTO_STREAM
    return name


GRADIENT_ALGORITHMS = tuple(name for name, spec in ALGORITHMS.items() if spec.kind == GRADIENT)


def algorithm_names(estimator):
    """The values ``estimator`` (a kind) accepts for ``algorithm``, "auto" first."""
    return ("auto", *(name for name, spec in ALGORITHMS.items() if estimator in spec.estimators))
