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

# the classifier's "ls" (least squares on coded labels): a per-row ridge added
# to the ridge from the public noise level, only so that epsilon = inf and a
# singular Gram stay defined (the prototype's value; docs/benchmarks/classifier_stream.md)
LS_ALPHA = 1e-6
# "auto" picks "ls" for a classifier stream of at most this many features
# (n_features_in_, public), "ftrl" above: "ls" keeps d x d sums (and the BLT's
# buffers of them) and solves a d x d eigenproblem per release, so its memory
# grows like d^2 and its time per call like d^3, where ftrl's are linear in d.
# Measured for one call of 1,000 rows, one BLAS thread
# (docs/benchmarks/classifier_stream.md): d = 300: 0.05 s, 14 MB traced;
# d = 1,000: 0.7 s, 134 MB; d = 2,000: 4.9 s, 520 MB (ftrl: 0.01 s, 1 MB).
# 1,000 keeps a call under a second and the state near 100 MB.
LS_AUTO_MAX_FEATURES = 1_000

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
        (:func:`skdpol.online._momentum.momentum_round` of the horizon) or,
        when absent, "gradient" (even rounds of at most GRADIENT_ROUND rows).
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
        gradient sums).
    one_release : {"stream", "pol", "averaged"} or None
        ``fit``'s single release (:func:`~skdpol.online.fit_once`): run the
        stream over all rows, POL over IGD, or the averaged GIGA iterate.
        None: the estimator's own (PQFTL's single noisy copy of the sums).
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
    fit_per_row: frozenset = frozenset()
    comparison_only: frozenset = frozenset()
    mutual_information: bool = False

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
        "ftrl", GRADIENT, "prefix-sum", _BOTH, loss=_LOSS, alpha=_ALPHA,
        paper_pure_dp=True, alpha_horizon_scale={CLASSIFIER: FTRL_ALPHA_SCALE},
        lazy_rows=frozenset({CLASSIFIER}), one_release="pol",
        fit_per_row=_REGRESSOR, comparison_only=_REGRESSOR),
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
    # epsilon 1 (5 seeds): King County R^2 0.752 vs fit 0.764 (0.751 at
    # epsilon 0.5), wine 0.190 vs 0.207 (0.217 at epsilon 0.5 since fit's
    # Huber schedule; docs/benchmarks/stream.md).
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
        one_release="stream"),
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

# the stream of "auto" where AUTO's is not defined or too wide: (name, most
# features a sufficient-statistic AUTO stream takes, or None). The classifier's "ls" has no paper
# calibration and keeps d x d sums (LS_AUTO_MAX_FEATURES). To go back to
# "ftrl" everywhere, set AUTO's classifier stream to "ftrl".
AUTO_STREAM_FALLBACK = {CLASSIFIER: ("ftrl", LS_AUTO_MAX_FEATURES)}


def auto_stream(estimator, n_features, calibration, pure=False):
    """The stream ``algorithm="auto"`` runs for ``estimator`` (a kind) on rows of
    ``n_features`` features (None: not known yet) under the noise
    ``calibration``, with ``pure`` for ``delta=0``: public quantities only."""
    choice = AUTO[estimator]
    name = choice[3] if pure or calibration == "paper" else choice[0]
    fallback = AUTO_STREAM_FALLBACK.get(estimator)
    if fallback is None:
        return name
    other, max_features = fallback
    # the width rule is for d x d state only (a first-order AUTO ignores it)
    too_wide = (ALGORITHMS[name].kind == SUFFICIENT_STATISTIC and n_features is not None
                and max_features is not None and n_features > max_features)
    if too_wide or (calibration == "paper" and ALGORITHMS[name].paper is not None):
        return other
    return name


GRADIENT_ALGORITHMS = tuple(name for name, spec in ALGORITHMS.items() if spec.kind == GRADIENT)


def algorithm_names(estimator):
    """The values ``estimator`` (a kind) accepts for ``algorithm``, "auto" first."""
    return ("auto", *(name for name, spec in ALGORITHMS.items() if estimator in spec.estimators))
