"""A Pipeline that streams: ``partial_fit`` through public steps into a private learner.

scikit-learn's ``Pipeline`` has no ``partial_fit``, so a stream of chunks
(``pandas.read_csv(chunksize=...)``, Parquet batches, Dask blocks through
``dask_ml.wrappers.Incremental``) had to be transformed by hand before each
call. :class:`StreamPipeline` does it: each chunk goes through the earlier
steps' ``transform`` and into the final estimator's ``partial_fit``.

Why the earlier steps must be public, and how they are fitted
-------------------------------------------------------------
A stream cannot fit its preprocessing on "the data": the data never sit in
one place, and a step fitted on the first chunk alone (a ``StandardScaler``)
would publish that chunk's exact statistics with every model. So every
earlier step must be *public* in the sense of
:func:`~skdpol.pipeline.check_public_step`: what it publishes, its fitted
attributes and through ``transform`` the rows the learner sees, depends on
the rows it was fitted on only through public quantities (the column count
and names, the schema, its parameters). Anything else is refused, naming the
step, before a row is read.

Such a step may still need ``fit`` to be usable (``OneHotEncoder`` sets
``categories_`` from its ``categories`` parameter, ``ColumnTransformer``
resolves its column names). It is fitted once, when the stream starts (the
final estimator not fitted yet), on a clone and on the first chunk. By the
definition above the fitted step, and so the transform of every later chunk,
would be the same had it been fitted on any other chunk with the same columns
(tested bit for bit): nothing of the first chunk's rows enters beyond its
column names and dtypes, which belong to the table's schema. The fitted
clones replace the steps only after the final estimator's ``partial_fit``
has succeeded, so a failing call (a transform error, mismatched widths, a
refused chunk) leaves the whole pipeline as it was; the final estimator's
own transaction keeps its state.

A skdpol *private* transformer (``PrivateStandardScaler``...) is a release
under its own budget each time it is fitted; inside a stream it would either
be fitted on the first chunk only or change the features under the learner
at every chunk. It enters a stream fitted once outside (on a sample, under
its own budget) and frozen with ``sklearn.frozen.FrozenEstimator``;
``fit`` (one release) accepts it unfrozen, as ``Pipeline.fit`` does.
"""


from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline, _name_estimators
from sklearn.utils._available_if import available_if
from sklearn.utils.metadata_routing import _routing_enabled, process_routing
from sklearn.utils.validation import check_is_fitted

from ..exceptions import PrivacyLeakError
from ._public_steps import _HOW, _is_private_skdpol, _parts, check_public_step, published_step


def _is_fitted(step):
    try:
        check_is_fitted(step)
    except NotFittedError:
        return False
    return True


def _passes(step):
    return step is None or (isinstance(step, str) and step == "passthrough")


def _final_has(method):
    """``available_if``'s check: the final step has ``method``."""
    def check(self):
        final = self._final_estimator
        if not hasattr(final, method):
            # an AttributeError: hasattr(pipeline, method) is False, so
            # dask-ml and sklearn see no such method; a direct call reads this
            raise AttributeError(
                f"This StreamPipeline has no {method}: its final step "
                f"{self.steps[-1][0]!r} ({type(final).__name__}) has no {method}.")
        return True
    return check


def _holds_private(step):
    """True when a skdpol private estimator sits anywhere inside ``step``."""
    if _is_private_skdpol(step):
        return True
    return any(_holds_private(part) for _, part in (_parts(step) or ()))


def _labelled(name, call, *args, **kwargs):
    """``call(*args, **kwargs)``; a plain ValueError gets the step's name in front."""
    try:
        return call(*args, **kwargs)
    except ValueError as exc:
        if type(exc) is not ValueError:  # typed errors keep their type and text
            raise
        raise ValueError(f"step {name!r} of the stream pipeline: {exc}") from exc


class StreamPipeline(Pipeline):
    """A ``Pipeline`` with ``partial_fit``: chunks through public steps into a private learner.

    Every earlier step must be public (:func:`~skdpol.pipeline.check_public_step`:
    ``PublicRangeScaler``, encoders with explicit categories, hashing,
    ``FunctionTransformer``, :func:`~skdpol.preprocessing.from_schema`'s
    preprocessor, composites of these, ``declare_public``); a step that would
    be fitted on the rows is refused with :class:`~skdpol.PrivacyLeakError`
    naming it. Earlier steps are fitted once, on a clone and on the first
    chunk of a stream, which, for a public step, gives the same transform
    whatever the chunk (the module's notes derive why). Everything else is
    ``Pipeline``: ``predict``, ``decision_function``, ``predict_proba``,
    ``score``, ``get_params`` / ``set_params`` (``<step>__<param>`` in a
    grid), metadata routing when enabled.

    Works inside ``dask_ml.wrappers.Incremental`` (which clones it and calls
    ``partial_fit`` block by block, passing its ``fit`` keywords, e.g.
    ``classes``, to every call) and ``GridSearchCV`` (``fit``).

    Parameters
    ----------
    steps : list of (str, estimator) tuples
        As for ``Pipeline``; the last step is the learner.
    transform_input : list of str or None, default=None
        As for ``Pipeline`` (``fit`` only, metadata routing enabled).
    memory : str or object with the joblib.Memory interface, default=None
        As for ``Pipeline`` (``fit`` only).
    verbose : bool, default=False
        As for ``Pipeline``.

    Attributes
    ----------
    named_steps : Bunch
    classes_ : ndarray
        The final estimator's.

    See Also
    --------
    make_stream_pipeline : Build one with names made from the steps.
    check_public_pipeline : The check for a plain ``Pipeline``.

    Notes
    -----
    Parameters of ``partial_fit`` and ``fit``: a bare name (``classes=``)
    goes to the final estimator; ``<step>__<param>`` to that step (an
    earlier step's to its ``fit``, taken when the step is fitted, at the
    start of a stream). With ``sklearn.set_config(enable_metadata_routing=True)``
    scikit-learn's routing decides instead: each step receives what it
    requested (``set_partial_fit_request(classes=True)`` on the learner).

    The earlier steps' output goes to the learner as it is: a sparse
    matrix (``OneHotEncoder``'s default, hashing) reaches the learner's
    ``partial_fit`` sparse.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from skdpol import PrivateOnlineLogistic
    >>> from skdpol.pipeline import StreamPipeline
    >>> colour = OneHotEncoder(categories=[["red", "green", "blue"]], handle_unknown="ignore",
    ...                        sparse_output=False)
    >>> pipe = StreamPipeline([("colour", colour),
    ...                        ("model", PrivateOnlineLogistic(epsilon=2.0, data_norm=1.0,
    ...                                                        horizon=400, random_state=0))])
    >>> X = np.array([["red"], ["green"], ["blue"], ["green"]] * 100)
    >>> y = (X[:, 0] == "green").astype(int)
    >>> pipe = pipe.partial_fit(X[:200], y[:200], model__classes=[0, 1])
    >>> pipe = pipe.partial_fit(X[200:], y[200:])
    >>> pipe.predict(np.array([["green"], ["red"]])).tolist()
    [1, 0]
    >>> public = pipe.public_model()         # the public step and the released model
    >>> public.predict(np.array([["green"], ["red"]])).tolist(), public.privacy_spent_.releases
    ([1, 0], 2)
    """

    # -- checks ---------------------------------------------------------------

    def _check_steps(self, method):
        """Refuse a leaking earlier step (and, in a stream, an unfrozen private one)."""
        for name, step in self.steps[:-1]:
            verdict = check_public_step(step, name)
            if verdict.kind == "leak":
                raise PrivacyLeakError(f"StreamPipeline.{method}: {verdict}. {_HOW}")
            if verdict.kind == "private" and method == "partial_fit":
                raise PrivacyLeakError(
                    f"StreamPipeline.partial_fit: {verdict}; fitted on the first chunk, its "
                    "features would rest on that chunk alone, and refitted on every chunk they "
                    "would change under the learner (each fit a further release). "
                    "Fit it once outside the stream (on a sample, under its own budget) and "
                    "pass it frozen (sklearn.frozen.FrozenEstimator).")

    def _route(self, method, params):
        """{step name: {callee method: params}} for ``fit`` or ``partial_fit``."""
        final_name = self.steps[-1][0]
        if _routing_enabled():
            routed = process_routing(self, method, **params)
            return {name: dict(routed[name]) for name, step in self.steps if not _passes(step)}
        names = [name for name, _ in self.steps]
        routed = {name: {} for name in names}
        for key, value in params.items():
            step, sep, param = key.partition("__")
            if not sep:
                step, param = final_name, key
            elif step not in routed:
                raise ValueError(f"StreamPipeline.{method}: {key!r} names no step (steps: "
                                 f"{names}); pass <step>__<param>, or a bare name for the "
                                 "final estimator.")
            if param in routed[step]:
                raise ValueError(f"StreamPipeline.{method}: {param!r} is given twice for step "
                                 f"{step!r} (bare and as {step}__{param}).")
            routed[step][param] = value
        return {name: {"fit": kw, "fit_transform": kw, "transform": {}, "partial_fit": kw}
                for name, kw in routed.items()}

    # -- learning -------------------------------------------------------------

    def fit(self, X, y=None, **params):
        """Fit every step on all of ``X`` (one release), as ``Pipeline.fit`` does.

        The earlier steps are checked first: a leaking step is refused with
        :class:`~skdpol.PrivacyLeakError` naming it; a skdpol private
        transformer is accepted (its fit is a release under its own budget).
        A bare parameter name goes to the final estimator.

        Parameters
        ----------
        X : array-like or DataFrame
        y : array-like, default=None
        **params : dict
            ``<step>__<param>``, or a bare name for the final estimator.

        Returns
        -------
        self : StreamPipeline
        """
        self._validate_steps()
        self._check_steps("fit")
        if not _routing_enabled():
            self._route("fit", params)  # the same checks of the names as partial_fit
            final_name = self.steps[-1][0]
            params = {key if "__" in key else f"{final_name}__{key}": value
                      for key, value in params.items()}
        return super().fit(X, y, **params)

    @available_if(_final_has("partial_fit"))
    def partial_fit(self, X, y=None, **params):
        """Learn from one chunk: through the earlier steps, into the final ``partial_fit``.

        When the final estimator is not fitted yet (a stream starts), the
        earlier steps are fitted on clones and on this chunk (public steps:
        the same whatever the chunk); later chunks only go through their
        ``transform``. On any error the pipeline is unchanged.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            One chunk, with the columns the first step expects.
        y : array-like of shape (n_samples,), default=None
        **params : dict
            A bare name (``classes=[...]``) goes to the final estimator's
            ``partial_fit``; ``<step>__<param>`` to that step (an earlier
            step's to its ``fit`` at the start of a stream).

        Returns
        -------
        self : StreamPipeline

        Raises
        ------
        PrivacyLeakError
            An earlier step is not public (named), before a row is read.
        ValueError
            A chunk the steps cannot transform (named step), e.g. a width
            that differs from the first chunk's.
        """
        self._validate_steps()
        self._check_steps("partial_fit")
        if self.transform_input is not None:
            raise ValueError("StreamPipeline.partial_fit does not transform metadata: "
                             "transform_input must be None.")
        routed = self._route("partial_fit", params)
        final_name, final = self.steps[-1]
        starting = not _is_fitted(final)
        steps, Xt = list(self.steps), X
        for idx, (name, step) in enumerate(self.steps[:-1]):
            if _passes(step):
                continue
            if starting or not _is_fitted(step):
                # fitted on a clone: committed only once the learner has taken the chunk
                step = clone(step)  # a FrozenEstimator clones to itself; its fit is a no-op
                if hasattr(step, "fit_transform"):
                    Xt = _labelled(name, step.fit_transform, Xt, y,
                                   **routed[name].get("fit_transform", {}))
                else:
                    _labelled(name, step.fit, Xt, y, **routed[name].get("fit", {}))
                    Xt = _labelled(name, step.transform, Xt,
                                   **routed[name].get("transform", {}))
                steps[idx] = (name, step)
            else:
                Xt = _labelled(name, step.transform, Xt, **routed[name].get("transform", {}))
        if not _passes(final):
            # the learner's own transaction: on any error its state is as before
            final.partial_fit(Xt, y, **routed[final_name].get("partial_fit", {}))
        self.steps = steps
        return self

    @available_if(_final_has("flush"))
    def flush(self):
        """End the stream: the final estimator's ``flush()``.

        The learner learns the rows still waiting in its incomplete last
        round and publishes the model of every row seen (see the final
        estimator's ``flush``); the earlier steps hold no rows, so nothing
        else changes. Afterwards ``partial_fit`` raises
        :class:`~skdpol.BudgetExhaustedError`.

        Returns
        -------
        self : StreamPipeline

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before any ``partial_fit``.

        Examples
        --------
        >>> import numpy as np
        >>> from skdpol import PrivateOnlineRegressor
        >>> from skdpol.pipeline import make_stream_pipeline
        >>> from skdpol.preprocessing import PublicRangeScaler
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(0, 10, size=(2_500, 2))
        >>> y = X @ [0.1, -0.05]
        >>> pipe = make_stream_pipeline(
        ...     PublicRangeScaler(bounds=(0, 10)),
        ...     PrivateOnlineRegressor(data_norm=1.5, y_bound=1.0, batch_size=1_000,
        ...                            random_state=0))
        >>> for start in range(0, 2_500, 1_000):
        ...     pipe = pipe.partial_fit(X[start:start + 1_000], y[start:start + 1_000])
        >>> pipe[-1].n_samples_waiting_
        500
        >>> pipe = pipe.flush()
        >>> pipe[-1].n_samples_waiting_, pipe[-1].n_samples_learned_
        (0, 2500)
        """
        final = self.steps[-1][1]
        check_is_fitted(final)
        final.flush()
        return self

    def get_metadata_routing(self):
        """``Pipeline``'s routing, plus ``partial_fit``.

        ``partial_fit`` routes to the earlier steps' ``fit_transform`` (or
        ``fit`` and ``transform``) and ``transform``, and to the final
        estimator's ``partial_fit``.

        Returns
        -------
        MetadataRouter
        """
        router = super().get_metadata_routing()
        final_name = self.steps[-1][0]
        # Pipeline builds one MethodMapping per step; partial_fit is added to
        # each (a private attribute of MetadataRouter: tested, so a change in
        # scikit-learn shows up as a failing test, not a silent misroute)
        for name, pair in router._route_mappings.items():
            mapping = pair.mapping
            if name == final_name:
                mapping.add(caller="partial_fit", callee="partial_fit")
            elif hasattr(self.named_steps[name], "fit_transform"):
                mapping.add(caller="partial_fit", callee="fit_transform")
                mapping.add(caller="partial_fit", callee="transform")
            else:
                mapping.add(caller="partial_fit", callee="fit")
                mapping.add(caller="partial_fit", callee="transform")
        return router

    # -- publishing -------------------------------------------------------------

    def public_model(self):
        """The shareable release: the fitted public steps and the learner's ``public_model()``.

        Returns
        -------
        PublicPipeline
            A ``Pipeline`` of copies of the fitted earlier steps (public: their state is the
            schema's; a frozen, fitted skdpol private step, such as a
            ``PrivateStandardScaler``, as its own ``public_model()``) and the
            final estimator's ``public_model()``; its pickle holds no
            curator state. ``[-1].privacy_spent_`` is the learner's (an
            earlier private step's release carries its own).

        Raises
        ------
        ValueError
            When an earlier step holds a skdpol private estimator without a
            ``public_model()`` (its pickle is curator state; publish its own
            release separately).
        """
        check_is_fitted(self)
        final_name, final = self.steps[-1]
        if not hasattr(final, "public_model"):
            raise AttributeError(f"the final step {final_name!r} ({type(final).__name__}) "
                                 "has no public_model().")
        steps = []
        for name, step in self.steps[:-1]:
            verdict = check_public_step(step, name)
            # a frozen, fitted private step (e.g. PrivateStandardScaler) goes
            # out as its public_model(); one without a release is refused
            published = published_step(step) if verdict.kind == "public" else step
            if verdict.kind != "public" or _holds_private(published):
                raise ValueError(
                    f"public_model: step {name!r} holds a skdpol private estimator with no "
                    "public_model(), whose state (noise keys, exact sums) is curator state "
                    "and must not be published with the model; publish its own release "
                    "separately.")
            steps.append((name, published))
        return PublicPipeline([*steps, (final_name, final.public_model())])


class PublicPipeline(Pipeline):
    """A published :class:`StreamPipeline`: fitted public steps and a public model.

    Made by :meth:`StreamPipeline.public_model`; ``predict``,
    ``decision_function``, ``predict_proba``, ``score`` and ``transform`` as
    ``Pipeline``. It is a release: it does not learn (``fit`` raises), and it
    counts as fitted although the public model has no ``fit``.

    Attributes
    ----------
    privacy_spent_ : PrivacySpent
        The final model's.
    """

    def __sklearn_is_fitted__(self):
        return True

    def fit(self, X, y=None, **params):
        """Refused: a published pipeline is a release; fit the stream pipeline instead."""
        raise TypeError("a PublicPipeline is a release and does not learn: fit or partial_fit "
                        "the StreamPipeline it was published from.")

    @property
    def privacy_spent_(self):
        return self._final_estimator.privacy_spent_


def make_stream_pipeline(*steps, memory=None, transform_input=None, verbose=False):
    """A :class:`StreamPipeline` with names made from the steps, checked at once.

    Like ``sklearn.pipeline.make_pipeline``; the earlier steps are checked
    here too (:func:`~skdpol.pipeline.check_public_step`), so a leaking step
    is refused before any data is read.

    Parameters
    ----------
    *steps : estimators
        Public transformers, then the learner (one with ``partial_fit`` to
        stream).
    memory, transform_input, verbose
        As for ``make_pipeline``.

    Returns
    -------
    StreamPipeline

    Raises
    ------
    PrivacyLeakError
        An earlier step is not public, named with the reason.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol import PrivateOnlineLogistic
    >>> from skdpol.pipeline import make_stream_pipeline
    >>> from skdpol.preprocessing import PublicRangeScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 100, size=(3000, 2))      # two columns, public range [0, 100]
    >>> y = (X[:, 0] > X[:, 1]).astype(int)
    >>> pipe = make_stream_pipeline(
    ...     PublicRangeScaler(bounds=(0, 100)),
    ...     PrivateOnlineLogistic(epsilon=1.0, data_norm=np.sqrt(2), horizon=3000,
    ...                           random_state=0))
    >>> for start in range(0, 3000, 1000):           # three chunks of a stream
    ...     pipe = pipe.partial_fit(X[start:start + 1000], y[start:start + 1000], classes=[0, 1])
    >>> pipe[-1].n_samples_seen_, pipe.score(X, y) > 0.9
    (3000, True)
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skdpol import PrivacyLeakError
    >>> try:
    ...     make_stream_pipeline(StandardScaler(), PrivateOnlineLogistic())
    ... except PrivacyLeakError as error:
    ...     print(str(error)[:57])
    make_stream_pipeline: step 'standardscaler': StandardScal
    """
    pipe = StreamPipeline(_name_estimators(steps), memory=memory,
                          transform_input=transform_input, verbose=verbose)
    for name, step in pipe.steps[:-1]:
        verdict = check_public_step(step, name)
        if verdict.kind == "leak":
            raise PrivacyLeakError(f"make_stream_pipeline: {verdict}. {_HOW}")
    return pipe
