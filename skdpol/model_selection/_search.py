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
   [0, 1] (:mod:`._scores`: Brier, clipped log-loss, accuracy, clipped
   squared error), averaged, plus discrete Gaussian noise (zCDP event S);
4. output (candidate, model, noisy score).

**Sensitivity of the score (replace-one).** Each row's score lies in
[0, 1] (each score's range is derived in :mod:`._scores`, and the per-row
values are clipped to it). Replacing one of the n_val validation rows
moves the mean by at most 1 / n_val. n_val is public (the split is by row
position, drawn without looking at the rows). The score's noise is a
discrete Gaussian of multiplier sqrt(1 / (2 rho_run)) on that
sensitivity: the score is ``ZCDpEvent(rho_run)`` whatever the score.

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
then found from its fit's declared cost at the training rows' shape
(:func:`_declared_fit_event`, the ledger's budget-check mechanism):
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

**Errors.** A Pipeline's earlier steps are checked first, for every grid
point (:func:`skdpol.pipeline.check_public_step`: a step not known to be
public is refused, since the winner's steps are released with it and a
warning would leave the reported epsilon false). X, y and the label set are checked before the budget check and
before any run (the estimators' own input checks: shapes, non-finite
values, label types, labels outside ``classes``), so a run cannot fail on
the rows half-way through a search. A candidate whose cost cannot be
calibrated raises its own error from its declared cost, which reads no row (it
says which candidate was drawn, i.e. something about K, but it aborts the
search before anything is released or recorded).
"""

import math
import os
import warnings
from numbers import Real

import numpy as np
from dp_accounting import dp_event
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier, is_regressor
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_y,
    _num_samples,
    check_consistent_length,
    validate_data,
)

from ..utils import ACCEPT_SPARSE, csr_rows
from ..accounting import PrivacySpent
from ..exceptions import PrivacyLeakWarning
from ..ledger import PrivacyLedger
from ..ledger import compose
from ..ledger import record_release
from ..linear_model import warn_delta
from ..mechanisms import NoiseSpec
from ..utils import run_transaction
from ..utils import is_seeded
from ..utils import user_stacklevel
from ._fit_params import route_fit_params, training_params
from ._repeat_select import (  # noqa: F401 (the accounting, importable from here as before)
    _declared_fit_event,
    _linear_rho,
    calibrate_epsilon,
    draw_runs,
    run_rho,
    search_epsilon,
    total_event,
)
from ._scores import BoundedScore, resolve_scoring
from ._search_checks import _RESERVED, _SearchChecks  # noqa: F401  (_RESERVED: its old home)
from ._search_using import _ReleasedModel


class _ReleasedPipeline(Pipeline):
    """A fitted Pipeline whose last step is a released model (it cannot learn).

    scikit-learn's fitted check wants a ``fit`` method on the last step, which
    a public release does not have; the steps are fitted by construction.
    """

    def __sklearn_is_fitted__(self):
        return True


# ---------------------------------------------------------------- estimator
class PrivateHyperparameterSearch(_SearchChecks, _ReleasedModel, MetaEstimatorMixin,
                                  BaseEstimator):
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
        records one entry for everything). A Pipeline's earlier steps are
        fitted on the training rows of every run and released with the
        winner, so each must be public (:func:`skdpol.pipeline.check_public_step`,
        for every grid point): anything else, e.g. scikit-learn's
        ``StandardScaler`` (the exact mean of the rows), is refused with
        :class:`~skdpol.PrivacyLeakError` naming the step, before any row is
        read. A skdpol private transformer is refused too (its releases would
        repeat in every run, outside the search's event): fit it once
        outside and pass it frozen (``sklearn.frozen.FrozenEstimator``; its
        own guarantee then covers it, not the search's). A step the check
        does not know may be declared public with
        :func:`skdpol.pipeline.declare_public`.
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
    scoring : {"auto", "brier", "log_loss", "accuracy", "clipped_mse"} or BoundedScore, \
default="auto"
        The per-row validation score in [0, 1] (sensitivity of the mean
        1 / n_val): for classifiers ``"brier"`` (one minus half the
        multiclass Brier score), ``"log_loss"`` (one minus the log-loss
        with probabilities floored at 0.01, over log 100; other floors:
        ``ClippedLogLoss(p_min=...)``) or ``"accuracy"``; for regressors
        ``"clipped_mse"``, ``1 - (clip(y) - clip(y_hat))^2 / (4 y_bound^2)``
        (the estimator's ``y_bound`` must be given). "auto": ``"brier"``
        for classifiers (accuracy cannot rank candidates on unbalanced
        labels, where all predict the majority; see
        ``docs/benchmarks/search.md``), ``"clipped_mse"`` for regressors.
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
    would depend on the data. The search checks this with
    :func:`skdpol.pipeline.check_public_step` for every grid point and
    refuses anything else (:class:`~skdpol.PrivacyLeakError`): a warning
    would leave ``privacy_spent_`` claiming a guarantee that does not hold.

    **Scores.** Accuracy cannot rank candidates that all predict the
    majority class, which on unbalanced labels is most of them; the Brier
    score ranks them by their probabilities at the same sensitivity
    (ranges and sensitivities in :mod:`skdpol.model_selection._scores`).

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

    In a Pipeline, name the final step's ``classes`` as ``GridSearchCV`` does;
    every earlier step must be public:

    >>> from sklearn.pipeline import Pipeline
    >>> from skdpol.preprocessing import PublicRangeScaler
    >>> pipe = Pipeline([("scale", PublicRangeScaler(bounds=(-4, 4))),
    ...                  ("logistic", PrivateOnlineLogistic(data_norm=2.0))])
    >>> search = PrivateHyperparameterSearch(
    ...     pipe, {"logistic__alpha": [1e-3, 1e-2]}, mean_runs=3, random_state=0)
    >>> search = search.fit(X, y, logistic__classes=[0, 1])
    >>> search.privacy_spent_.inferred  # the label set was given, not read
    ()
    """

    _parameter_constraints = {
        "estimator": [object],
        "param_distributions": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "mean_runs": [Interval(Real, 1, None, closed="left")],
        "shape": [Interval(Real, 0, None, closed="left"), Options(Real, {np.inf})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "scoring": [StrOptions({"auto", "accuracy", "brier", "log_loss", "clipped_mse"}),
                    BoundedScore],
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
    def fit(self, X, y, classes=None, **fit_params):
        """Run the search and release the best run.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, default=None
            Classifiers: the public label set, passed to every run's ``fit``.
            None reads it off y once, with ``PrivacyLeakWarning`` (flagged in
            ``privacy_spent_.inferred``), and passes it to every run.
        **fit_params : dict
            For a Pipeline, ``<step>__<param>`` as ``GridSearchCV`` routes
            them: ``<final step>__classes`` is ``classes``; an earlier
            step's parameters go to its ``fit`` (per-row ones cut to the
            training rows).

        Returns
        -------
        self : object
        """
        self._validate_params()
        classes, step_params = route_fit_params(self.estimator, classes, fit_params)
        run_transaction(self, self._fit, X, y, classes, step_params)
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
            # sparse X as the estimators take it (CSR): the runs index its rows
            X, y = validate_data(self, X, y, reset=True, dtype=np.float64, y_numeric=regressor,
                                 accept_sparse=ACCEPT_SPARSE)
            X = csr_rows(X)
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

    def _fit(self, X, y, classes, step_params):
        name, final = self._check_estimator()
        candidates = self._grid(name, final)
        scoring = resolve_scoring(self.scoring, final)
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
        step_params = training_params(X, step_params, train_idx)

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
                Xt = run[:-1].fit_transform(X_train, y_train, **step_params) \
                    if isinstance(run, Pipeline) else X_train
                key = (int(pick), getattr(Xt, "shape", None))
                if key not in calibrated:
                    calibrated[key] = self._calibrate(run_final, Xt, y_train, classes, rho)
                run_final.set_params(epsilon=calibrated[key])
                if classes is not None:
                    run_final.fit(Xt, y_train, classes=classes)
                else:
                    run_final.fit(Xt, y_train)
                value = scoring(run, run_final, X_val, y_val)  # mean of [0, 1] rows
            noisy = float(score_noise.perturb(np.array([value]),
                                              sensitivity=scoring.sensitivity(n_val),
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
        """The ``epsilon`` at which ``final.fit`` costs at most ``rho`` (zCDP)."""
        return calibrate_epsilon(final, Xt, y_train, classes, rho, self.delta)
