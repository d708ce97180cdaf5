"""Which Pipeline steps are public: fitted on private rows, they release nothing.

A step before a private learner is *public* when what it publishes (its
fitted attributes, and through ``transform`` the rows the learner sees)
depends on the training rows only through public quantities: the column
count, the schema, the parameters. scikit-learn's ``StandardScaler`` is
not: its ``mean_`` is the exact mean of the rows, published with the model
and outside any (epsilon, delta). One question, one answer:
:func:`check_public_step` says ``"public"``, ``"private"`` (a skdpol private
transformer: its fit is a release under its *own* budget) or ``"leak"``
(not known to be public), with a reason and the path of the step.

Known public (type checked exactly: a subclass may learn in ``fit``):

* ``"passthrough"``, ``"drop"``, None;
* skdpol's :class:`~skdpol.preprocessing.PublicRangeScaler` (public ranges);
* stateless scikit-learn maps whose ``fit`` reads only the column count:
  ``FunctionTransformer`` (its function is *assumed* to map each row on its
  own, and ``check_inverse`` must not run it on rows when an
  ``inverse_func`` is given: that check warns depending on the rows),
  ``FeatureHasher``, ``HashingVectorizer``, ``Normalizer``, ``Binarizer``,
  ``PolynomialFeatures``, ``SimpleImputer(strategy="constant")`` without
  ``add_indicator``, ``MissingIndicator(features="all")``;
* ``OneHotEncoder`` / ``OrdinalEncoder`` with explicit ``categories`` lists,
  no ``min_frequency`` / ``max_categories``, and a ``handle_unknown`` that
  neither raises nor warns on a row's value (``"ignore"`` or
  ``"infrequent_if_exist"``; ``"use_encoded_value"`` for the ordinal one);
* ``Pipeline``, ``FeatureUnion`` and ``ColumnTransformer`` whose every part
  is public (a ``ColumnTransformer`` may choose columns by name, position or
  ``make_column_selector``, not by another callable, and with a possibly
  sparse block its ``sparse_threshold`` must be 0 or 1: between them the
  output's format is decided by the density of the training rows);
* ``FrozenEstimator`` of a public step, or of a fitted skdpol private
  transformer (fitted once, outside: its release has its own guarantee);
* any step wrapped by :func:`declare_public` (the user's statement, with a
  reason kept on the wrapper).

Everything else is a leak until declared otherwise.
"""

import copy
import warnings
from dataclasses import dataclass

from sklearn.base import BaseEstimator, MetaEstimatorMixin, TransformerMixin, clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.feature_extraction import FeatureHasher
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import (
    Binarizer,
    FunctionTransformer,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
)
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import check_is_fitted

from ..exceptions import PrivacyLeakError, PrivacyLeakWarning
from ..preprocessing import PublicRangeScaler
from ..utils import user_stacklevel

_STATELESS = (FeatureHasher, HashingVectorizer, Normalizer, Binarizer, PolynomialFeatures)
_RANK = {"public": 0, "private": 1, "leak": 2}
_HOW = ("Use a public step (skdpol.preprocessing.PublicRangeScaler, encoders with explicit "
        "categories), fit a skdpol private transformer once outside and freeze it "
        "(sklearn.frozen.FrozenEstimator), or, if it reads no statistic of the rows, declare "
        "it public: skdpol.pipeline.declare_public(step, reason=...).")


@dataclass(frozen=True)
class StepCheck:
    """The verdict on one step.

    Attributes
    ----------
    kind : {"public", "private", "leak"}
        ``"private"``: a skdpol private transformer, whose fit is a release
        under its own (epsilon, delta), not under the caller's.
    path : str
        Where the step sits, e.g. ``"columntransformer > num"``.
    reason : str
    """

    kind: str
    path: str
    reason: str

    @property
    def public(self):
        return self.kind == "public"

    def __str__(self):
        return f"step {self.path!r}: {self.reason}"


class DeclaredPublic(MetaEstimatorMixin, TransformerMixin, BaseEstimator):
    """A step the user declares public; made by :func:`declare_public`.

    Behaves as a clone of ``estimator`` fitted in ``fit`` (``estimator_``).
    The declaration is a parameter, so it survives ``clone``, pickling and
    ``set_params``; its parameters are ``<step>__estimator__<name>`` in a
    grid. Replacing the whole step replaces the declaration.

    Parameters
    ----------
    estimator : transformer
    reason : str
        Why its fit reads no statistic of the private rows (kept, and
        repeated by :func:`check_public_step`).

    Attributes
    ----------
    estimator_ : transformer
        The fitted clone.
    """

    _parameter_constraints = {"estimator": [object], "reason": [str]}

    def __init__(self, estimator, *, reason):
        self.estimator = estimator
        self.reason = reason

    def _check_reason(self):
        if not self.reason.strip():
            raise ValueError("declare_public needs a reason: why the step reads no statistic "
                             "of the rows it is fitted on.")

    def fit(self, X, y=None, **fit_params):
        self._validate_params()
        self._check_reason()
        self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        self._validate_params()
        self._check_reason()
        self.estimator_ = clone(self.estimator)
        return self.estimator_.fit_transform(X, y, **fit_params)

    def transform(self, X):
        check_is_fitted(self, "estimator_")
        return self.estimator_.transform(X)

    @available_if(lambda self: hasattr(self.estimator, "inverse_transform"))
    def inverse_transform(self, X):
        check_is_fitted(self, "estimator_")
        return self.estimator_.inverse_transform(X)

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "estimator_")
        return self.estimator_.get_feature_names_out(input_features)

    @property
    def n_features_in_(self):
        return self.estimator_.n_features_in_

    def __sklearn_tags__(self):
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags = inner.input_tags
        tags.transformer_tags = inner.transformer_tags
        return tags


def declare_public(step, *, reason):
    """Declare a step public: its fit reads no statistic of the private rows.

    The one way to let a step that :func:`check_public_step` does not know
    into a private search or a :func:`check_public_pipeline`; the reason is
    the user's to justify, and is repeated wherever the step is checked.

    Parameters
    ----------
    step : transformer
    reason : str
        Non-empty.

    Returns
    -------
    DeclaredPublic
        A transformer wrapping ``step`` (grid names ``<step>__estimator__<name>``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import SplineTransformer
    >>> from skdpol.pipeline import check_public_step, declare_public
    >>> knots = np.linspace(17, 90, 5).reshape(-1, 1)  # public age range
    >>> check_public_step(SplineTransformer(knots=knots)).kind
    'leak'
    >>> spline = declare_public(SplineTransformer(knots=knots), reason="knots fixed in advance")
    >>> print(check_public_step(spline, "age"))
    step 'age': declared public: knots fixed in advance
    >>> spline.fit_transform(np.array([[20.0], [50.0]])).shape
    (2, 7)
    """
    return DeclaredPublic(step, reason=reason)


def _name(step):
    return step.lower() if isinstance(step, str) else type(step).__name__.lower()


def _is_private_skdpol(step):
    return (type(step).__module__.startswith("skdpol.") and hasattr(step, "get_params")
            and "ledger" in step.get_params(deep=False))


def _leaf(step):
    """(kind, reason) of a step that holds no other step."""
    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return "public", "passes columns through or drops them"
    kind = type(step)
    if kind is PublicRangeScaler:
        return "public", "maps public ranges; fit reads only the column count"
    if _is_private_skdpol(step):
        return "private", (f"{kind.__name__} spends its own budget (epsilon="
                           f"{step.get_params(deep=False).get('epsilon')}) at every fit")
    if kind is FunctionTransformer:
        if step.check_inverse and step.func is not None and step.inverse_func is not None:
            return "leak", ("FunctionTransformer with inverse_func and check_inverse=True runs "
                            "both on training rows and warns depending on them: set "
                            "check_inverse=False")
        return "public", "stateless (its function is assumed to map each row on its own)"
    if kind in _STATELESS:
        return "public", f"{kind.__name__} is stateless: fit reads only the column count"
    if kind is SimpleImputer:
        if step.strategy != "constant" or step.add_indicator:
            return "leak", ("SimpleImputer computes its fill values (or which columns have "
                            "missing values) from the rows: use strategy='constant', "
                            "add_indicator=False")
        return "public", "constant imputation reads no statistic"
    if kind is MissingIndicator:
        if step.features != "all":
            return "leak", ("MissingIndicator(features='missing-only') records which columns "
                            "have missing training values: use features='all'")
        return "public", "features='all' reads no statistic"
    if kind in (OneHotEncoder, OrdinalEncoder):
        safe = ("ignore", "infrequent_if_exist") if kind is OneHotEncoder \
            else ("use_encoded_value",)
        if isinstance(step.categories, str):
            return "leak", (f"{kind.__name__}(categories='auto') reads the category lists off "
                            "the rows: pass categories=[...] (public lists)")
        if step.min_frequency is not None or step.max_categories is not None:
            return "leak", (f"{kind.__name__} with min_frequency or max_categories counts the "
                            "rows of each category")
        if step.handle_unknown not in safe:
            return "leak", (f"{kind.__name__}(handle_unknown={step.handle_unknown!r}) raises or "
                            "warns on an unknown value in a row (the message depends on the "
                            f"data): use handle_unknown={safe[0]!r}")
        return "public", "explicit categories, unknown values handled without reading rows"
    return "leak", (f"{kind.__name__} is not known to be public: its fit may compute "
                    "statistics of the rows (e.g. StandardScaler's exact mean_), released "
                    "outside the guarantee")


def _may_be_sparse(step):
    if isinstance(step, Pipeline):
        return any(_may_be_sparse(s) for _, s in step.steps)
    if isinstance(step, (FeatureHasher, HashingVectorizer)):
        return True
    if isinstance(step, OneHotEncoder):
        return bool(step.sparse_output)
    return not isinstance(step, (str, type(None), PublicRangeScaler, OrdinalEncoder,
                                 SimpleImputer))


def published_step(step):
    """A copy of a fitted public ``step`` for a release, where every
    ``FrozenEstimator`` of a fitted skdpol private estimator is replaced by
    that estimator's ``public_model()`` (its pickle is curator state, its
    release is not), inside composites too (their fitted parts included)."""
    if (isinstance(step, FrozenEstimator) and _is_private_skdpol(step.estimator)
            and hasattr(step.estimator, "public_model")):
        return step.estimator.public_model()
    step = copy.deepcopy(step)
    for owner, attr in _part_lists(step):
        setattr(owner, attr, [(part[0], published_step(part[1]), *part[2:])
                              if not isinstance(part[1], str) else part
                              for part in getattr(owner, attr)])
    if isinstance(step, ColumnTransformer) and not isinstance(step.remainder, str):
        step.remainder = published_step(step.remainder)
    return step


def _part_lists(step):
    """(object, attribute) of each list of (name, step, ...) tuples in ``step``:
    a fitted ColumnTransformer transforms with ``transformers_``."""
    if isinstance(step, Pipeline):
        return [(step, "steps")]
    if isinstance(step, FeatureUnion):
        return [(step, "transformer_list")]
    if isinstance(step, ColumnTransformer):
        return [(step, "transformers")] + ([(step, "transformers_")]
                                           if hasattr(step, "transformers_") else [])
    return []


def _parts(step):
    """The steps a composite holds, as (name, step) pairs; None for a leaf."""
    if isinstance(step, Pipeline):
        return list(step.steps)
    if isinstance(step, FeatureUnion):
        return list(step.transformer_list)
    if isinstance(step, ColumnTransformer):
        parts = [(name, block) for name, block, _ in step.transformers]
        if step.remainder not in ("drop", "passthrough"):
            parts.append(("remainder", step.remainder))
        return parts
    if isinstance(step, FrozenEstimator):
        return [("estimator", step.estimator)]
    return None


def _worst(verdicts, path, reason):
    worst = max(verdicts, key=lambda v: _RANK[v.kind], default=None)
    if worst is None or worst.public:
        return StepCheck("public", path, reason)
    return worst


def check_public_step(step, name=None):
    """Is this step public, private (its own budget), or a leak? With the reason.

    Parameters
    ----------
    step : transformer, "passthrough", "drop" or None
        Fitted or not; composites (``Pipeline``, ``FeatureUnion``,
        ``ColumnTransformer``, ``FrozenEstimator``) are checked part by part.
    name : str or None, default=None
        The step's name in its Pipeline (its class name, lower case, by default).

    Returns
    -------
    StepCheck
        For a composite, the worst part (``"leak"`` over ``"private"`` over
        ``"public"``), whose ``path`` names it.

    Examples
    --------
    >>> from sklearn.compose import make_column_transformer
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from skdpol.pipeline import check_public_step
    >>> from skdpol.preprocessing import PublicRangeScaler
    >>> check_public_step(PublicRangeScaler(bounds=(0, 90))).public
    True
    >>> columns = make_column_transformer(
    ...     (OneHotEncoder(categories=[["a", "b"]], handle_unknown="ignore"), [0]),
    ...     (StandardScaler(), [1]), sparse_threshold=0)
    >>> verdict = check_public_step(columns)
    >>> verdict.kind, verdict.path
    ('leak', 'columntransformer > standardscaler')
    """
    path = _name(step) if name is None else name
    if isinstance(step, DeclaredPublic):
        return StepCheck("public", path, f"declared public: {step.reason}")
    if isinstance(step, FrozenEstimator) and _is_private_skdpol(step.estimator):
        if not hasattr(step.estimator, "privacy_spent_"):
            return StepCheck("leak", path, "a FrozenEstimator of an unfitted private step")
        return StepCheck("public", path, (
            f"a fitted {type(step.estimator).__name__}, frozen: its release has its own "
            "guarantee (its privacy_spent_, not counted here); transform is post-processing"))
    parts = _parts(step)
    if parts is None:
        kind, reason = _leaf(step)
        return StepCheck(kind, path, reason)
    verdicts = [check_public_step(part, f"{path} > {sub}") for sub, part in parts]
    if isinstance(step, ColumnTransformer):
        for sub, _, columns in step.transformers:
            if callable(columns) and not isinstance(columns, make_column_selector):
                verdicts.append(StepCheck("leak", f"{path} > {sub}", (
                    "its columns are chosen by a callable, which may read the rows: give "
                    "names, positions or make_column_selector")))
        threshold = step.sparse_threshold
        if 0 < threshold < 1 and any(_may_be_sparse(part) for _, part in parts):
            verdicts.append(StepCheck("leak", path, (
                f"sparse_threshold={threshold} makes the output sparse or dense by the "
                "density of the training rows' output: set sparse_threshold=0 or 1")))
    return _worst(verdicts, path, f"every part of {type(step).__name__} is public")


def check_public_pipeline(pipeline, *, on_leak="raise"):
    """Check that a Pipeline publishes nothing of its rows outside a guarantee.

    Every step must be public (:func:`check_public_step`) or a skdpol
    private estimator, whose fit is a release under its own (epsilon,
    delta). The helper for users of ``GridSearchCV`` and of plain
    ``Pipeline.fit`` on private rows: a ``StandardScaler`` in front of
    ``PrivateOnlineLogistic`` publishes the exact mean of the rows with the
    model. (``GridSearchCV``'s exact validation scores and choice are a
    further release that no step covers: see the model-selection guide.)
    :class:`~skdpol.model_selection.PrivateHyperparameterSearch` runs the
    same check and refuses a leak (and a private earlier step, whose
    releases would repeat in every run).

    Parameters
    ----------
    pipeline : Pipeline
    on_leak : {"raise", "warn"}, default="raise"
        ``"raise"``: :class:`~skdpol.PrivacyLeakError` naming every leaking
        step and how to declare one public; ``"warn"``: the same text as a
        :class:`~skdpol.PrivacyLeakWarning` (the fitted pipeline's
        ``privacy_spent_`` then does not cover those steps).

    Returns
    -------
    list of StepCheck
        One per step, in order.

    Raises
    ------
    PrivacyLeakError
        With ``on_leak="raise"``, for a step that is neither public nor private.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skdpol import PrivacyLeakError, PrivateOnlineLogistic
    >>> from skdpol.pipeline import check_public_pipeline
    >>> from skdpol.preprocessing import PublicRangeScaler
    >>> ok = make_pipeline(PublicRangeScaler(bounds=(0, 10)), PrivateOnlineLogistic(data_norm=2))
    >>> [v.kind for v in check_public_pipeline(ok)]
    ['public', 'private']
    >>> try:
    ...     check_public_pipeline(make_pipeline(StandardScaler(), PrivateOnlineLogistic()))
    ... except PrivacyLeakError as error:
    ...     print(str(error)[:72])
    step 'standardscaler': StandardScaler is not known to be public: its fit
    """
    if on_leak not in ("raise", "warn"):
        raise ValueError(f"on_leak must be 'raise' or 'warn', got {on_leak!r}.")
    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"check_public_pipeline needs a Pipeline, got {type(pipeline).__name__}.")
    verdicts = [check_public_step(step, name) for name, step in pipeline.steps]
    leaks = [v for v in verdicts if v.kind == "leak"]
    if leaks:
        message = "; ".join(str(v) for v in leaks) + ". " + _HOW
        if on_leak == "raise":
            raise PrivacyLeakError(message)
        warnings.warn(message, PrivacyLeakWarning, stacklevel=user_stacklevel())
    return verdicts


def refuse_unless_public(steps, what):
    """Raise :class:`~skdpol.PrivacyLeakError` unless every (name, step) is public.

    For callers that run the steps many times under one event (the private
    search): a private step's releases would repeat outside it, so it is
    refused too, with the way out (fit once outside, freeze).
    """
    for name, step in steps:
        verdict = check_public_step(step, name)
        if verdict.kind == "leak":
            raise PrivacyLeakError(f"{what}: {verdict}. {_HOW}")
        if verdict.kind == "private":
            raise PrivacyLeakError(
                f"{what}: {verdict}; its releases would be repeated in every run and are not "
                "part of the search's event. Fit it once outside the search (its own "
                "release) and pass it frozen (sklearn.frozen.FrozenEstimator), or search "
                "over the final estimator only.")

