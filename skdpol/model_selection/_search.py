"""PrivateHyperparameterSearch: choose hyper-parameters on private rows, privately.

The mechanism is Papernot & Steinke's "repeat and select" (Hyperparameter
tuning with Renyi differential privacy, ICLR 2022, arXiv 2110.03620): draw
a random number K of runs from a known distribution, run K independent
copies of a private mechanism Q, release only the output with the best
(noisy) score. dp-accounting states its cost as
``RepeatAndSelectDpEvent(event of Q, mean of K, shape of K)`` and accounts
for it with its RDP accountant (Theorems 2 and 6 of the paper; there is no
PLD for it). skdpol's ledger composes it by that route.

One run Q (all of it from public quantities but the two private steps):

1. draw one candidate uniformly from the grid (data-independent);
2. fit a clone with that candidate on the *training* rows -- a release of
   the estimator's own event F;
3. score the fitted model on the *validation* rows: a per-row score in
   [0, 1] (accuracy, or one minus the clipped squared error over its
   largest value), averaged, plus discrete Gaussian noise (zCDP event S);
4. output (candidate, model, noisy score).

**Sensitivity of the score (replace-one).** Each row's score lies in
[0, 1]: accuracy is 0 or 1; for a regressor, with b = ``y_bound`` (public),
label and prediction are both clipped to [-b, b], so
(y - y_hat)^2 <= 4 b^2 and ``1 - (y - y_hat)^2 / (4 b^2)`` is in [0, 1].
Replacing one of the n_val validation rows moves the mean by at most
1 / n_val. n_val is public (the split is by row position, drawn without
looking at the rows).

**Cost of one run: parallel composition, done properly.** The split is
public and the training and validation rows are disjoint. If the replaced
row is a training row, the validation rows are unchanged and the noisy
score is a randomised function of the model: (model, score) costs what the
fit costs, F. If it is a validation row, the model's distribution is
unchanged and only the score moves: the run costs S. So the run's Renyi
divergence at every order is at most max(F, S). skdpol's fits with
``delta > 0`` are Gaussian or zCDP mechanisms, whose RDP is linear in the
order (rho alpha); the search calibrates every candidate's ``epsilon`` so
that its fit costs at most ``rho_run`` (zCDP) and gives the score exactly
``rho_run``, so the run is ``ZCDpEvent(rho_run)`` at every order -- the
base event of the recorded ``RepeatAndSelectDpEvent``. (A mixture over
data-independent candidates costs at most the largest of them, by the
joint quasi-convexity of Renyi divergence.) Sequential composition would
have charged 2 rho_run.

**Calibration.** ``rho_run`` is the largest zCDP rho whose
``RepeatAndSelectDpEvent(ZCDpEvent(rho), mean_runs, shape)`` is
(epsilon, delta)-DP by dp-accounting's RDP accountant on skdpol's orders
(bisection on log rho, rounded down). Each drawn candidate's ``epsilon`` is
then found by dry runs of its fit on zero rows of the training rows' shape
(:func:`_dry_run`, the ledger's budget-check mechanism):
its event's rho must be at most ``rho_run`` (within 0.1 %).

**K is curator state.** The number of runs is drawn from the secret
generator and never published: the theorem bounds the best output's
distribution with K *marginalised*; conditioned on K = k the release is a
best-of-k, which can cost up to k times a run (the best of k coin flips).
So there is no ``n_runs_``, and nothing the search says depends on K or on
which candidates ran: the runs' own warnings are silenced (K copies of a
warning would count the runs) and the search warns once, from the
parameters of *every* grid point (a bound some candidate reads off the
data, delta against 1/n); ``privacy_spent_.inferred`` is computed the same
way. The docs warn that the search's running time reveals K.

**Errors.** X, y and the label set are checked before the budget check and
before any run (the estimators' own input checks: shapes, non-finite
values, label types, labels outside ``classes``), so a run cannot fail on
the rows half-way through a search. A candidate whose cost cannot be
calibrated raises its own error from the dry run, which reads no row (it
says which candidate was drawn, i.e. something about K, but it aborts the
search before anything is released or recorded).
"""

import copy
import math
import os
import warnings
from numbers import Real

import numpy as np
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as _rdp
from scipy.optimize import brentq
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier, is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_y,
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from ..accounting import PrivacySpent, epsilon_spent, gaussian_mu, zcdp_epsilon, zcdp_rho
from ..accounting._spent import _round_up
from ..ledger import PrivacyLedger
from ..ledger._compose import _rdp_epsilon, compose
from ..exceptions import PrivacyLeakWarning
from ..ledger._hook import _placeholder_args, _Planned, record_release
from ..linear_model._base import warn_delta
from ..mechanisms import NoiseSpec
from ..utils import run_transaction
from ..utils._stream import is_seeded
from ..utils._warnings import user_stacklevel

# what the search sets on every run: a grid may not vary them
_RESERVED = ("epsilon", "delta", "random_state", "ledger")


# ---------------------------------------------------------------- accounting
def total_event(rho_run, mean_runs, shape):
    """The search's ``DpEvent``: K ~ (mean_runs, shape) runs of a rho_run-zCDP run."""
    return dp_event.RepeatAndSelectDpEvent(
        dp_event.ZCDpEvent(rho=float(rho_run)), float(mean_runs), float(shape))


def search_epsilon(rho_run, mean_runs, shape, delta):
    """Epsilon of :func:`total_event` at ``delta`` (dp-accounting's RDP, skdpol's orders)."""
    return _round_up(float(_rdp_epsilon(total_event(rho_run, mean_runs, shape), delta)))


_RHO_CACHE = {}


def run_rho(epsilon, delta, mean_runs, shape):
    """Largest zCDP rho of one run such that the whole search is (epsilon, delta)-DP.

    Bisection on log rho (dp-accounting's RDP accountant for the repeat-and-
    select event is monotone in the run's rho), rounded down; the search's
    epsilon is then at most ``epsilon``. Memoised (a pure function).
    """
    key = (float(epsilon), float(delta), float(mean_runs), float(shape))
    if key not in _RHO_CACHE:

        def excess(log_rho):
            return search_epsilon(math.exp(log_rho), mean_runs, shape, delta) - epsilon

        # one run alone at rho is cheaper than the search (the bound adds
        # non-negative terms), so the answer is below a single run's budget rho
        hi = math.log(epsilon**2)  # rho >= epsilon^2 would overspend one run already
        while excess(hi) <= 0:
            hi += 1.0
        lo = hi - 2.0
        while excess(lo) > 0:
            lo -= 2.0
        log_rho = brentq(excess, lo, hi, xtol=1e-7)
        rho = math.exp(log_rho) * (1 - 1e-6)
        while excess(math.log(rho)) > 0:  # never over the target
            rho *= 1 - 1e-4
        _RHO_CACHE[key] = rho
    return _RHO_CACHE[key]


def _linear_rho(event):
    """rho with RDP(alpha) <= rho alpha at *every* order, if ``event`` is
    Gaussian and/or zCDP only (a Gaussian of multiplier m is 1/(2 m^2)-zCDP);
    None otherwise."""
    rho = zcdp_rho(event)
    if rho is not None:
        return float(rho)
    mu = gaussian_mu(event)
    if mu is not None:
        return 0.5 * float(mu) ** 2
    return None


def _dry_run(estimator, args):
    """The ``DpEvent`` ``estimator.fit(*args)`` would record, from public quantities.

    The ledger's budget-check mechanism (:func:`skdpol.ledger._hook.planned_event`):
    a deep copy fits zero rows of the arguments' shape and stops at its
    release site. Unlike the budget check, a failure is the candidate's own
    error and is raised as such: it was computed from zeros, the shape and
    the public label set, so it says nothing about the rows.
    """
    shadow = copy.deepcopy(estimator)
    shadow._ledger_planning = True
    try:
        shadow.fit(*_placeholder_args(estimator, args))
    except _Planned as planned:
        return planned.event
    raise ValueError(f"{type(estimator).__name__}.fit released nothing on a dry run.")


def draw_runs(rng, mean_runs, shape):
    """K, from the distribution dp-accounting's bound is for.

    shape = inf: Poisson(mean) (K = 0 possible); shape = 0: logarithmic;
    otherwise the negative binomial NB(shape, gamma) conditioned on K >= 1
    (geometric for shape = 1), with gamma from dp-accounting's own
    mean -> gamma map (it returns the conservative end of its bisection, so
    the distribution drawn from is exactly the one accounted for).
    """
    if math.isinf(shape):
        return int(rng.poisson(mean_runs))
    gamma = _rdp._gamma_truncated_negative_binomial(float(shape), float(mean_runs))
    if gamma >= 1.0:
        return 1
    if shape == 0:
        return int(rng.logseries(1.0 - gamma))
    while True:  # rejection of 0: the truncated negative binomial
        k = int(rng.negative_binomial(float(shape), gamma))
        if k >= 1:
            return k


class _ReleasedPipeline(Pipeline):
    """A fitted Pipeline whose last step is a released model (it cannot learn).

    scikit-learn's fitted check wants a ``fit`` method on the last step, which
    a public release does not have; the steps are fitted by construction.
    """

    def __sklearn_is_fitted__(self):
        return True


# ---------------------------------------------------------------- estimator
class PrivateHyperparameterSearch(MetaEstimatorMixin, BaseEstimator):
    """Differentially private hyper-parameter search (repeat and select).

    Runs a random number K of candidates drawn uniformly from a grid, each
    fitted on the training rows and scored on the validation rows with
    noise, and releases only the best run: its parameters, its model and its
    noisy score, under **one** (epsilon, delta) guarantee that covers the
    whole search including the choice (Papernot & Steinke 2022). K is drawn
    from a truncated negative binomial (``shape``; geometric by default)
    with mean ``mean_runs``; its cost is dp-accounting's
    ``RepeatAndSelectDpEvent``, computed with the RDP accountant.

    Parameters
    ----------
    estimator : skdpol estimator or Pipeline ending in one
        A classifier or regressor with ``epsilon``, ``delta`` and ``ledger``
        parameters (``PrivateOnlineLogistic``, ``PrivateOnlineRegressor``,
        ``KernelPrivateOnlineRegressor``). The search sets its ``epsilon``
        (per run), ``delta``, ``random_state`` and ``ledger=None`` (the search
        records one entry for everything). A Pipeline's earlier steps must
        release nothing private (no skdpol private transformer: fit those
        once, outside the search); they are fitted on the training rows of
        every run and treated, as everywhere in skdpol, as public maps.
    param_distributions : dict or list of dicts
        A grid as for ``ParameterGrid`` (lists of values); every run draws
        one of its points uniformly, data-independently. ``epsilon``,
        ``delta``, ``random_state`` and ``ledger`` may not appear (the search
        sets them); for a regressor neither may ``y_bound`` (the score is
        clipped to it).
    epsilon : float, default=1.0
        The budget of the *whole* search: every run and the choice.
        ``numpy.inf``: a non-private reference (no noise anywhere).
    delta : float, default=1e-5
        In (0, 1); the runs are Gaussian / zCDP mechanisms and the bound is a
        Renyi one, so there is no pure-DP version.
    mean_runs : float, default=10
        The mean of K (>= 1). More runs explore more of the grid; each run
        then gets less budget.
    shape : float, default=1.0
        The distribution of K: 1 geometric, 0 logarithmic, ``numpy.inf``
        Poisson, any other positive value the truncated negative binomial of
        that shape. Smaller shapes cost less at the same mean but make a
        single run more likely (the logarithmic distribution with mean 10 has
        K = 1 about a third of the time); only Poisson can draw K = 0, in
        which case the search releases no model (``best_estimator_`` is
        None).
    validation_fraction : float, default=0.2
        The share of the rows held out for scoring, chosen by a random
        permutation of the row positions that reads no row (public).
    scoring : {"auto", "accuracy", "clipped_mse"}, default="auto"
        The per-row score in [0, 1]: accuracy (classifiers) or
        ``1 - (clip(y) - clip(y_hat))^2 / (4 y_bound^2)`` (regressors; the
        estimator's ``y_bound`` must be given). "auto" picks by the
        estimator's type.
    random_state : int, RandomState instance or None, default=None
        Seeds everything: the split, K, the candidates, every run's noise
        and the score's noise. Use None (fresh OS entropy) for real
        releases: anyone who knows the seed can regenerate the noise and
        K. An int makes the search reproducible (``privacy_spent_.seeded``
        then says so); every run gets its own derived seed.
    ledger : PrivacyLedger, str, path-like or None, default=None
        Record the search as one entry (its ``RepeatAndSelectDpEvent``), and
        refuse a search that would pass the ledger's budget with
        :class:`~skdpol.BudgetExhaustedError` before any row is read.

    Attributes
    ----------
    best_params_ : dict or None
        The winning candidate (grid parameters only).
    best_estimator_ : estimator or None
        The winning run's model as released: the estimator's
        ``public_model()`` (for a Pipeline, the fitted earlier steps followed
        by it). It was fitted on the training rows only: refitting it on all
        rows would be another release, so there is no ``refit``.
    best_score_ : float
        The winner's noisy validation score (part of the release).
    rho_run_ : float
        The zCDP cost of one run (public: a function of the parameters).
    classes_ : ndarray
        Classifiers only: the winner's label set.
    n_features_in_ : int
    feature_names_in_ : ndarray
        When X has string column names.
    privacy_spent_ : skdpol.accounting.PrivacySpent
        The (epsilon, delta) of the whole search (``accountant="rdp"``).

    Notes
    -----
    **What is released**: ``best_params_``, ``best_estimator_`` (a public
    model), ``best_score_``, ``privacy_spent_`` and what is computed from
    them (``predict``, ``score``). The models and scores of the other runs
    and the number of runs K are not released and are not kept; releasing K
    would void the guarantee (given K = k the release is a best-of-k, which
    can cost up to k runs), and the wall-clock time of ``fit`` reveals it
    roughly, so do not publish it. The runs' own warnings are silenced (their
    number would count the runs); the search warns once for what any grid
    point would read off the data, and ``privacy_spent_.inferred`` lists it.
    ``best_estimator_.privacy_spent_`` is the search's (the model is part of
    the search's release), not its run's.

    A Pipeline's earlier steps are fitted on the training rows in every run
    and applied to the validation rows: they must be public maps that
    cannot fail on any row (e.g. an encoder with public categories and
    ``handle_unknown="ignore"``); an error they raise on a validation row
    would depend on the data.

    **Derivations** (score sensitivity 1 / n_val, parallel composition of
    the fit and the score, calibration) are in the module docstring of
    ``skdpol.model_selection._search``.

    References
    ----------
    N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential
    Privacy. ICLR 2022 (arXiv 2110.03620).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol import PrivateOnlineLogistic
    >>> from skdpol.model_selection import PrivateHyperparameterSearch
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(6_000, 4))
    >>> y = (X @ [2.0, -1.0, 0.5, 0.0] + rng.logistic(size=6_000) > 0).astype(int)
    >>> search = PrivateHyperparameterSearch(
    ...     PrivateOnlineLogistic(data_norm=4.0),
    ...     {"alpha": [1e-3, 1e-2, 1e-1], "algorithm": ["noisy-gd", "igd"]},
    ...     epsilon=1.0, delta=1e-5, mean_runs=3, random_state=0)
    >>> search = search.fit(X, y, classes=[0, 1])
    >>> round(search.privacy_spent_.epsilon, 2) <= 1.0, search.privacy_spent_.accountant
    (True, 'rdp')
    >>> sorted(search.best_params_)
    ['algorithm', 'alpha']
    >>> bool(search.score(X, y) > 0.7)
    True
    """

    _parameter_constraints = {
        "estimator": [object],
        "param_distributions": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "mean_runs": [Interval(Real, 1, None, closed="left")],
        "shape": [Interval(Real, 0, None, closed="left"), Options(Real, {np.inf})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "scoring": [StrOptions({"auto", "accuracy", "clipped_mse"})],
        "random_state": ["random_state"],
        "ledger": [PrivacyLedger, str, os.PathLike, None],
    }

    def __init__(self, estimator, param_distributions, *, epsilon=1.0, delta=1e-5,
                 mean_runs=10, shape=1.0, validation_fraction=0.2, scoring="auto",
                 random_state=None, ledger=None):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.mean_runs = mean_runs
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.random_state = random_state
        self.ledger = ledger

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        from sklearn.utils import get_tags

        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        for kind in (tags.classifier_tags, tags.regressor_tags):
            if kind is not None:
                kind.poor_score = True  # noisy models, honestly declared
        tags.input_tags = inner.input_tags
        tags.target_tags.required = True
        return tags

    # ----------------------------------------------------------- checks (public)
    def _final(self, estimator=None):
        estimator = self.estimator if estimator is None else estimator
        if isinstance(estimator, Pipeline):
            return estimator.steps[-1][0], estimator.steps[-1][1]
        return None, estimator

    def _check_estimator(self):
        name, final = self._final()
        params = final.get_params(deep=False) if hasattr(final, "get_params") else {}
        if not (type(final).__module__.startswith("skdpol.")
                and {"epsilon", "delta", "ledger"} <= set(params)
                and (is_classifier(final) or is_regressor(final))):
            raise ValueError(
                "PrivateHyperparameterSearch needs a skdpol classifier or regressor (or a "
                "Pipeline ending in one) with epsilon, delta and ledger parameters; got "
                f"{type(final).__name__}.")
        if isinstance(self.estimator, Pipeline):
            for step_name, step in self.estimator.steps[:-1]:
                for obj in [step, *step.get_params(deep=True).values()] \
                        if hasattr(step, "get_params") else [step]:
                    if (type(obj).__module__.startswith("skdpol.") and hasattr(obj, "get_params")
                            and "ledger" in obj.get_params(deep=False)):
                        raise ValueError(
                            f"the Pipeline's step {step_name!r} holds a private skdpol "
                            f"{type(obj).__name__}: its releases would be repeated in every "
                            "run and are not part of the search's event. Fit it once "
                            "outside the search (its own release) and search over the "
                            "final estimator.")
        for obj in [final] + ([s for _, s in self.estimator.steps[:-1]]
                              if isinstance(self.estimator, Pipeline) else []):
            if hasattr(obj, "get_params") and obj.get_params(deep=False).get("ledger") is not None:
                raise ValueError(
                    f"{type(obj).__name__} has its own ledger: give the ledger to "
                    "PrivateHyperparameterSearch (ledger=...), which records the whole "
                    "search as one entry; the runs record nothing themselves.")
        return name, final

    def _grid(self, name, final):
        grid = self.param_distributions
        for point in [grid] if isinstance(grid, dict) else grid:
            if not isinstance(point, dict):
                raise TypeError("param_distributions must be a dict or a list of dicts.")
            for key, values in point.items():
                param = key.rsplit("__", 1)[-1]
                if param in _RESERVED or (param == "y_bound" and is_regressor(final)):
                    what = ("the search sets it on every run from its own epsilon and "
                            "delta" if param in ("epsilon", "delta") else
                            "the score is clipped to one public y_bound" if param == "y_bound"
                            else "the search sets it")
                    raise ValueError(
                        f"param_distributions may not vary {key!r}: {what}. Remove it "
                        "(the search's epsilon is the budget of the whole search).")
                if not hasattr(values, "__len__") or isinstance(values, str):
                    raise TypeError(
                        f"param_distributions[{key!r}] must be a list of values (a grid "
                        "point is drawn uniformly): the search bounds every candidate's "
                        "cost, so a continuous distribution is not supported.")
        candidates = list(ParameterGrid(grid))
        if not candidates:
            raise ValueError("param_distributions holds no candidate.")
        valid = set(self.estimator.get_params(deep=True))
        for point in candidates:
            for key in point:
                if key not in valid:
                    raise ValueError(f"invalid parameter {key!r} for {type(self.estimator).__name__}.")
        return candidates

    def _scoring(self, final):
        scoring = self.scoring
        if scoring == "auto":
            scoring = "accuracy" if is_classifier(final) else "clipped_mse"
        if scoring == "accuracy" and not is_classifier(final):
            raise ValueError("scoring='accuracy' needs a classifier.")
        if scoring == "clipped_mse":
            if not is_regressor(final):
                raise ValueError("scoring='clipped_mse' needs a regressor.")
            if getattr(final, "y_bound", None) is None:
                raise ValueError(
                    "a regressor's validation score is clipped to its y_bound, which must "
                    "be given (a public bound): set y_bound on the estimator.")
        return scoring

    # ----------------------------------------------------------- randomness
    def _generators(self):
        """(secret rng, split rng, run seeds) from ``random_state``."""
        state = self.random_state
        if isinstance(state, np.random.RandomState):
            state = int.from_bytes(state.bytes(16), "little")
        if state is None:
            return np.random.default_rng(), np.random.default_rng(), lambda j: None
        state = int(state)
        secret = np.random.default_rng(np.random.SeedSequence(state, spawn_key=(0,)))
        split = np.random.default_rng(np.random.SeedSequence(state, spawn_key=(1,)))

        def seed(j):
            # 32 bits: what scikit-learn's random_state constraint accepts
            return int(np.random.SeedSequence(state, spawn_key=(2, j)).generate_state(1)[0])

        return secret, split, seed

    # ----------------------------------------------------------- fitting
    def fit(self, X, y, classes=None):
        """Run the search and release the best run.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            Classifiers: the public label set, passed to every run's ``fit``.
            None reads it off y once, with ``PrivacyLeakWarning`` (flagged in
            ``privacy_spent_.inferred``), and passes it to every run.

        Returns
        -------
        self : object
        """
        self._validate_params()
        run_transaction(self, self._fit, X, y, classes)
        return self

    def _validated(self, X, y, final, classes):
        """X and y checked before anything else happens (the error is the input's).

        A bare estimator gets what it accepts (dense float64, finite); a
        Pipeline's first step decides what X may be, so X is passed on as
        given and only its shape and column names are recorded. Raising here
        depends on the data only as any skdpol estimator's input checks do
        (non-finite values, label types), before any run reads a row.
        """
        regressor = is_regressor(final)
        if isinstance(self.estimator, Pipeline):
            X, y = validate_data(self, X, y, reset=True, skip_check_array=True)
            X = indexable(X)[0]  # sparse to CSR, other sequences to arrays
            y = _check_y(y, y_numeric=regressor, estimator=self)
            check_consistent_length(X, y)
        else:
            X, y = validate_data(self, X, y, reset=True, dtype=np.float64, y_numeric=regressor)
        if not is_classifier(final):
            if classes is not None:
                raise ValueError("classes is only for classifiers.")
            return X, y, None, ()
        check_classification_targets(y)
        inferred = ()
        if classes is None:
            warnings.warn(
                "classes is None: the label set was read off y, which leaks it. Pass "
                "classes=... to state it publicly.", PrivacyLeakWarning,
                stacklevel=user_stacklevel())
            classes, inferred = np.unique(y), ("classes",)
        classes = np.unique(np.asarray(classes))
        if classes.size < 2:
            # the labels may come from the data: count them, never echo them
            raise ValueError(f"{type(final).__name__} needs at least 2 classes; got "
                             f"{classes.size} class{'' if classes.size == 1 else 'es'}.")
        if (classes.dtype.kind in "biuf") != (y.dtype.kind in "biuf"):
            raise ValueError("y and classes hold different label types (numeric and not).")
        unknown = ~np.isin(y, classes)
        if np.any(unknown):
            # as the estimators do: name the rows, never echo the labels
            rows = np.flatnonzero(unknown)
            raise ValueError(f"y has labels not in classes {classes.tolist()} in {rows.size} "
                             f"row(s) (first rows {rows[:5].tolist()}).")
        return X, y, classes, inferred

    def _fit(self, X, y, classes):
        name, final = self._check_estimator()
        candidates = self._grid(name, final)
        scoring = self._scoring(final)
        X, y, classes, inferred = self._validated(X, y, final, classes)
        n = _num_samples(X)
        n_val = int(round(self.validation_fraction * n))
        if n_val < 1 or n - n_val < 1:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves no training or no "
                f"validation row out of {n} sample{'' if n == 1 else 's'}.")
        inferred = tuple(sorted(set(inferred) | self._inferred_bounds(candidates)))
        warn_delta(self.delta, n)  # the search's delta covers every row
        private = not math.isinf(self.epsilon)
        rho = run_rho(self.epsilon, self.delta, self.mean_runs, self.shape) if private else math.inf
        event = (total_event(rho, self.mean_runs, self.shape) if private
                 else dp_event.NonPrivateDpEvent())
        self.__dict__.pop("_ledger_head", None)  # every search is its own entry
        ledger = self.ledger if self.ledger is None or isinstance(self.ledger, PrivacyLedger) \
            else PrivacyLedger(self.ledger)
        if ledger is not None:
            ledger.check(event)  # before any row is read

        secret, split_rng, run_seed = self._generators()
        order = split_rng.permutation(n)  # reads no row
        val_idx, train_idx = np.sort(order[:n_val]), np.sort(order[n_val:])
        X_train, y_train = _safe_indexing(X, train_idx), y[train_idx]
        X_val, y_val = _safe_indexing(X, val_idx), y[val_idx]

        # the curator's draws: K and the candidates (never published)
        n_runs = draw_runs(secret, self.mean_runs, self.shape)
        picks = secret.integers(len(candidates), size=n_runs)
        # the score's noise: a discrete Gaussian of exactly rho_run (its
        # event, ZCDpEvent(0.5 / m^2), accounts for the grid's inflation)
        score_noise = NoiseSpec("gaussian", "discrete", math.sqrt(0.5 / rho) if private else 0.0)
        calibrated = {}
        best = None
        for j, pick in enumerate(picks):
            run = clone(self.estimator).set_params(**candidates[pick])
            run_final = self._final(run)[1]
            run_final.set_params(delta=self.delta, random_state=run_seed(j), ledger=None)
            # a run's warnings would be repeated K times (K is secret): the
            # search stated the parameter-driven ones above, once
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                Xt = run[:-1].fit_transform(X_train, y_train) \
                    if isinstance(run, Pipeline) else X_train
                key = (int(pick), getattr(Xt, "shape", None))
                if key not in calibrated:
                    calibrated[key] = self._calibrate(run_final, Xt, y_train, classes, rho)
                run_final.set_params(epsilon=calibrated[key])
                if classes is not None:
                    run_final.fit(Xt, y_train, classes=classes)
                else:
                    run_final.fit(Xt, y_train)
                value = self._validation_score(run, scoring, run_final, X_val, y_val)
            noisy = float(score_noise.perturb(np.array([value]), sensitivity=1.0 / n_val,
                                              rng=secret)[0])
            if best is None or noisy > best[0]:
                best = (noisy, candidates[pick], run, run_final)

        if private:
            eps, how = compose([event], self.delta)
        else:
            eps, how = math.inf, "none (epsilon=inf)"
        self.privacy_spent_ = PrivacySpent(
            epsilon=float(eps), delta=float(self.delta), accountant=how,
            bounds_trusted=not inferred, releases=1, inferred=inferred,
            seeded=is_seeded(self.random_state))
        if best is None:  # Poisson drew K = 0: the release is "nothing"
            self.best_params_, self.best_estimator_, self.best_score_ = None, None, math.nan
            self.__dict__.pop("classes_", None)
        else:
            noisy, params, run, run_final = best
            public = run_final.public_model()
            # the model is part of the search's release: its guarantee is the
            # search's, not the run's (whose epsilon is one run's, K unaccounted)
            public.privacy_spent_ = self.privacy_spent_
            if isinstance(run, Pipeline):
                public = _ReleasedPipeline(run.steps[:-1] + [(run.steps[-1][0], public)])
            elif hasattr(self, "feature_names_in_"):
                public.feature_names_in_ = self.feature_names_in_  # the runs saw arrays
            self.best_params_, self.best_estimator_, self.best_score_ = dict(params), public, noisy
            if is_classifier(run_final):
                self.classes_ = run_final.classes_
        self.rho_run_ = rho
        record_release(self, event)  # last: a refusal undoes the search

    def _inferred_bounds(self, candidates):
        """The bounds some candidate of the grid would read off the data.

        From the parameters of *every* grid point, not of the runs drawn:
        which candidates ran would say something about K. Warned once here
        (the runs' own warnings are silenced).
        """
        names = set()
        for point in candidates:
            params = clone(self.estimator).set_params(**point)
            params = self._final(params)[1].get_params(deep=False)
            names.update(b for b in ("data_norm", "y_bound") if b in params and params[b] is None)
        for b in sorted(names):
            warnings.warn(
                f"{b} is None for some candidate: each such run reads its bound off the "
                f"training rows, which leaks it and voids the guarantee for it. Pass {b}.",
                PrivacyLeakWarning, stacklevel=user_stacklevel())
        return names

    def _calibrate(self, final, Xt, y_train, classes, rho):
        """The ``epsilon`` at which ``final.fit`` costs at most ``rho`` (zCDP).

        Dry runs of the fit on zero rows of the training rows' shape (the
        ledger's budget-check mechanism; no row is read): the first guess
        is the zCDP epsilon of rho (exact for the discrete-Gaussian
        default), the second the Gaussian-DP one (exact for
        ``noise_sampler="float"``), then secant steps on log epsilon.
        """
        if math.isinf(rho):
            return math.inf
        args = (Xt, y_train, classes) if classes is not None else (Xt, y_train)

        def cost(eps):
            shadow = clone(final).set_params(epsilon=eps)
            shadow._validate_params()  # a bad candidate's own error, before the dry run
            event = _dry_run(shadow, args)
            r = _linear_rho(event)
            if r is None:
                raise ValueError(
                    f"{type(final).__name__}'s fit costs {event!r}, not a Gaussian or zCDP "
                    "mechanism: private selection here needs each run's Renyi curve to be "
                    "linear (delta > 0 and a Gaussian noise path).")
            return r

        eps = zcdp_epsilon(rho, self.delta)
        r = cost(eps)
        feasible = eps if r <= rho else None
        if not (rho * (1 - 1e-3) <= r <= rho):
            guess = epsilon_spent(dp_event.GaussianDpEvent(1.0 / math.sqrt(2 * rho)),
                                  self.delta)[0]
            points = [(eps, r)]
            for _ in range(8):
                if len(points) >= 2:  # secant on log rho vs log epsilon
                    (e0, r0), (e1, r1) = points[-2], points[-1]
                    slope = (math.log(r1) - math.log(r0)) / (math.log(e1) - math.log(e0)) \
                        if e1 != e0 and r1 != r0 else 2.0
                    guess = e1 * math.exp((math.log(rho * (1 - 2e-4)) - math.log(r1)) / slope)
                eps = guess * (1 - 1e-9)
                r = cost(eps)
                points.append((eps, r))
                if r <= rho:
                    feasible = eps if feasible is None else max(feasible, eps)
                    if r >= rho * (1 - 1e-3):
                        break
        if feasible is None:
            raise ValueError(
                f"could not calibrate {type(final).__name__}'s epsilon to the run's zCDP "
                f"cost rho={rho:.3g}.")
        return feasible

    @staticmethod
    def _validation_score(run, scoring, run_final, X_val, y_val):
        """The mean per-row score in [0, 1] (sensitivity 1 / n_val, module docstring)."""
        pred = run.predict(X_val)
        if scoring == "accuracy":
            return float(np.mean(pred == y_val))
        b = float(run_final.y_bound)
        err = np.clip(y_val.astype(np.float64), -b, b) - np.clip(pred, -b, b)
        # a NaN prediction scores 0, the worst: every row's score stays in [0, 1]
        return float(np.mean(np.nan_to_num(1.0 - err * err / (4.0 * b * b), nan=0.0)))

    # ----------------------------------------------------------- using
    def _best(self, X):
        """The released model and X checked against what fit saw."""
        check_is_fitted(self, "privacy_spent_")
        if not isinstance(self.estimator, Pipeline):  # a Pipeline's first step checks X
            X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.best_estimator_ is None:
            raise NotFittedError(
                "the search released no model (shape=inf, Poisson, drew no run; its cost "
                "was still spent).")
        return self.best_estimator_, X

    def __sklearn_is_fitted__(self):
        return hasattr(self, "privacy_spent_")

    def _estimator_has(attr):
        def check(self):
            return hasattr(self._final()[1], attr)

        return check

    def predict(self, X):
        """Predictions of the released model."""
        model, X = self._best(X)
        return model.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the released model (classifiers)."""
        model, X = self._best(X)
        return model.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Scores of the released model (classifiers)."""
        model, X = self._best(X)
        return model.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """The released model's score on (X, y) (not private for private X, y)."""
        model, X = self._best(X)
        return model.score(X, y, sample_weight=sample_weight)
