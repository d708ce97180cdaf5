"""PrivateOnlineLogistic: logistic regression on a stream, binary and multiclass."""

import warnings
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils import ACCEPT_SPARSE, csr_rows, issparse, row_dots
from ..exceptions import PrivacyLeakWarning
from ..ledger import check_budget
from ..online import ALGORITHMS, CLASSIFIER
from ..utils import inject_docstring
from ..utils import Transaction
from ..utils import user_stacklevel
from ._algorithms import algorithm_constraint, check_width
from ._base import SHARED_CONSTRAINTS, PrivateLinearMixin
from ._dask_fit import fit_dask, is_dask
from ._public import PublicLinearClassifier, _decision, _predict, _proba
from ._streams import GradientStream


def encode_labels(classes, y, offset=0):
    """Labels -> loss encoding: +-1 for two classes, class indices beyond.

    Unknown labels are an error naming rows (``offset`` added: a block's
    first row in the whole input), never echoing the values.
    """
    classes, y = np.asarray(classes), np.asarray(y)
    numeric = classes.dtype.kind in "biuf"
    if numeric != (y.dtype.kind in "biuf"):
        raise ValueError(
            f"y holds {'non-numeric' if numeric else 'numeric'} labels but classes "
            f"are {'numeric' if numeric else 'non-numeric'}: pass y with the label "
            "type of classes."
        )
    if classes.size == 2 and numeric:
        # two numeric classes: two comparisons instead of a search (~0.1 of
        # ~0.25 ms a chunk of 10,000 rows in a wide stream); the same
        # encoding and the same rows unknown (NaN equals neither class)
        positive = y == classes[1]
        unknown = ~(positive | (y == classes[0]))
        if np.any(unknown):
            _unknown_labels(classes, unknown, offset)
        return np.where(positive, 1.0, -1.0)
    index = np.searchsorted(classes, y)
    index = np.clip(index, 0, classes.size - 1)
    unknown = classes[index] != y
    if np.any(unknown):
        _unknown_labels(classes, unknown, offset)
    if classes.size == 2:
        return np.where(index == 1, 1.0, -1.0)
    return index.astype(np.float64)


def _unknown_labels(classes, unknown, offset):
    # the offending values are data: name the rows, never echo the labels
    rows = np.flatnonzero(unknown) + offset
    raise ValueError(
        f"y has labels not in classes {classes.tolist()} in {rows.size} "
        f"row(s) (first rows {rows[:5].tolist()})."
    )


@inject_docstring()
class PrivateOnlineLogistic(PrivateLinearMixin, ClassifierMixin, BaseEstimator):
    """Differentially private logistic regression on a stream.

    Every round's loss is the logistic loss (binary) or the multinomial
    cross-entropy (three classes or more) of the round's rows plus
    ``alpha/2 ||W||^2``, minimised over the ball that holds the regularised
    optimum. ``algorithm`` picks how privacy is obtained:

    * ``"auto"`` (default): for ``partial_fit`` streams ``"ls"`` up to
      1,000 features, ``"ftrl-momentum"`` above (state linear in d, rounds
      growing with d; ``"ftrl"`` there when ``delta=0``) and over a
      ``horizon`` of 100,000 rows or more (rounds of 500-1,000 rows, faster
      than ``SGDClassifier``; ``"ls"`` there when ``delta=0``), ``"ftrl"`` with
      ``noise_calibration="paper"``; ``"noisy-gd"`` for ``fit``
      (``"igd"``'s POL when ``delta=0`` or ``noise_calibration="paper"``).
      The resolved name is ``algorithm_``.
    * ``"ls"``: least squares on the labels coded -1 / +1 (one-hot in
      {{0, 1}} for three classes or more), the second-order approximation of
      the logistic loss (PASS-GLM, Huggins et al. 2017): the sums X^T X and
      X^T Y go through private prefix sums (as in "ftrl") and the model is
      solved at every release with a ridge set from the public noise level.
      Its scores are scaled to the logistic scale (a fixed public factor),
      so ``predict_proba`` is the usual sigmoid / softmax. d x d state.
      One pass over Adult in chunks of 1,000 at epsilon = 1: accuracy
      0.846 against 0.839 for "ftrl" and 0.854 for ``fit`` (medians of 5
      seeds, docs/benchmarks/classifier_stream.md). ``fit`` with "ls" releases the sums
      of every row once.
    * ``"noisy-gd"``: full-batch noisy gradient descent (Nesterov momentum)
      on the unpenalised loss, K Gaussian steps composed with
      ``dp-accounting``; K and the step size come from public quantities
      (n, the bounds, epsilon, delta; :func:`skdpol.online.gradient_schedule`).
      Not a seed algorithm: the standard private ERM method (Bassily, Smith
      and Thakurta 2014), and the most accurate one-release ``fit``
      measured (Adult, epsilon = 1: 85.3 % against 86.2 % non-private,
      ``benchmarks/bench_real.py``). In a stream each call's rounds take
      their own K steps from the previous model; rounds are disjoint, so
      the stream costs one round.
    * ``"ftrl"``: private Follow-the-Regularised-Leader, proximal:
      the gradients at the published models are summed through a tree of
      private prefix sums (as in "ftal"), and the quadratic regularisers are
      centred at the published models instead of at zero, so ``alpha`` sets
      the step size without biasing the model towards zero. Noise in the
      model ~ log(T) / T.
    * ``"ftal"``: private Follow-the-Approximate-Leader on the penalised loss
      (seed 001's PFTAL): the same tree; polylog regret for the penalised
      loss, whose optimum ``alpha`` biases.
    * ``"igd"``: implicit gradient descent with output perturbation (PIGD,
      seed 002 §3.3).
    * ``"giga"``: projected gradient descent with output perturbation
      (PGIGA, seed 002 §3.4); its first ~(alpha + R^2/4) / alpha rounds
      publish random points, so it needs a large ``alpha``.
    * ``"mi-ogd"``: seed 000's dual averaging on per-row noisy gradients
      (``feedback="full"``) or one-point estimates from one loss value
      (``feedback="bandit"``): a local guarantee, one Gaussian per row.

    ``fit`` publishes one model: noisy GD for "noisy-gd" (and "auto"), POL
    (seed 002 Algorithm 6, the averaged IGD iterate plus one Gaussian whose
    noise shrinks like ln T / T) for "igd", "ftal" and "ftrl", the averaged
    GIGA iterate for "giga", one pass for "mi-ogd".

    Parameters
    ----------
    {epsilon}
    {delta}
    {data_norm}
    alpha : float or None, default=None
        Strong convexity (L2 penalty per row) in unit space (rows divided by
        ``data_norm``), so it means the same whatever the units of X. For
        "ftrl" it sets the step size 1 / (alpha n) without biasing the model;
        for "ftal", "igd", "giga" and "mi-ogd" the noise in the model scales
        like 1 / (alpha n_samples) and the penalty's bias grows with alpha;
        for "noisy-gd" it is a plain ridge penalty. None: 0.01 (measured on
        Adult, one pass in chunks of 1,000, epsilon 1 and inf); for "ftrl"
        with a ``horizon`` of n rows, min(0.01, 0.7 / sqrt(n)) (FTRL's
        regulariser grows like sqrt(n); public, never read off the data);
        no penalty for "noisy-gd", whose finite number of steps regularises;
        for "ls" a per-row ridge added to the one set by the noise level,
        1e-6 by default.
    algorithm : {{"auto", "ls", "noisy-gd", "ftrl", "ftrl-momentum", "ftal", "igd", "giga", \
"mi-ogd"}}, default="auto"
        See above and the user guide's page on the algorithm families.
        ``"ftrl-momentum"``: DP-FTRL with heavy-ball momentum and averaging
        on the logistic (or multinomial) loss, rounds of 100 rows (50 below
        a ``horizon`` of 10,000; from 100,000, ceil(horizon / 200) rows, at
        most 1,000, with the step of 600) with ``batch_size="auto"``; the
        default stream above 1,000 features and over a ``horizon`` of
        100,000 rows or more (shorter and narrower, measured against
        ``"ls"`` one pass at epsilon = 1: ahead on Adult, behind on credit
        default; docs/benchmarks/stream.md; longer, ahead of "ls" on every
        stream measured and faster than ``SGDClassifier``:
        docs/benchmarks/classifier_large.md). Above 1,000 features its rounds
        grow with d (ceil(d / 64) rows, at most ``horizon`` / 50) and its
        step is twice the narrow one: at 2^17 hashed columns, one pass at
        epsilon = inf matches one pass of ``SGDClassifier``
        (docs/benchmarks/wide.md; the user guide's "Wide rows").
    feedback : {{"full", "bandit"}}, default="full"
        ``"bandit"`` (only with ``algorithm="mi-ogd"``) uses one loss value
        per row at a randomly perturbed model instead of the gradient.
    {batch_size}
    {release_every}
    {horizon}
    {noise_calibration}
    {noise_sampler}
    {mechanism}
        Used by the ``"ls"``, ``"ftrl"``, ``"ftrl-momentum"`` and ``"ftal"`` streams.
    {fit_intercept}
    {random_state}
    {ledger}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Published coefficients (one row for two classes).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    algorithm_ : str
        The algorithm that ran (``"auto"`` resolved).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.
    n_samples_seen_ : int
        Rows consumed so far.
    {stream_counts}
    privacy_spent_ : skdpol.accounting.PrivacySpent
        The (epsilon, delta) that covers every model published so far.
    mutual_information_bound_ : float
        Only for ``algorithm="mi-ogd"``: seed 000's per-round bound C (nats).
        It is the Gaussian channel's bound, so it needs
        ``noise_sampler="float"`` and ``delta > 0``; NaN otherwise.

    See Also
    --------
    skdpol.PrivateOnlineRegressor : the same algorithms for regression.
    skdpol.linear_model.PublicLinearClassifier : the shareable release.

    Notes
    -----
    **Sparse input.** ``X`` may be a ``scipy.sparse`` CSR or CSC matrix in
    every method (one-hot or hashed features as they are): rows are clipped
    and learned from their nonzeros, never made dense.

    **Neighbours and sensitivity.** Two streams differ in one row (with its
    label), replaced. Rows are clipped to ``data_norm``, and the intercept
    is a constant column equal to ``data_norm``, so a row v has
    ``||v|| <= R = sqrt(2) data_norm``. The gradient of a row's loss in W is
    ``l'(s) v^T`` with ``|l'| <= 1`` (binary) or ``||l'|| <= sqrt(2)``
    (multinomial), so one row moves a gradient sum by at most 2 R
    (2 sqrt(2) R). Multiclass uses the multinomial loss, so the privacy cost
    does not grow with the number of classes (one-vs-rest would pay
    sqrt(n_classes)). "ls" releases sums instead of gradients; its
    replace-one sensitivity, also free of the number of classes, is derived
    in :mod:`skdpol.online._lsq`. Each algorithm's derivation is in its
    module of :mod:`skdpol.online`.

    **Labels.** The label set is public: pass ``classes`` on the first call
    of ``partial_fit``. ``fit`` reads it off ``y`` and warns with
    :class:`~skdpol.PrivacyLeakWarning` unless ``classes`` is passed.

    **What is released.** ``coef_``, ``intercept_``, ``classes_``,
    ``predict*``, ``decision_function``, ``score``, ``privacy_spent_``,
    ``public_model()``. The pickle of the live estimator holds curator state
    (exact gradient sums or un-noised iterates, the noise generator) and must
    never be published.

    References
    ----------
    P. Jain, P. Kothari, A. Thakurta. Differentially Private Online Learning.
    COLT 2012. A. Smith, A. Thakurta. (Nearly) Optimal Algorithms for
    Private Online Learning in Full-information and Bandit Settings. NIPS
    2013. J. Zhang, S. Venkatasubramanian. Mutual-Information-Private Online
    Gradient Descent. 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol import PrivateOnlineLogistic
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40_000, 4))
    >>> y = (X @ [2.0, -1.0, 0.5, 0.0] + rng.logistic(size=40_000) > 0).astype(int)
    >>> clf = PrivateOnlineLogistic(epsilon=1.0, data_norm=4.0, random_state=0)
    >>> for start in range(0, 40_000, 10_000):
    ...     clf = clf.partial_fit(X[start:start + 10_000], y[start:start + 10_000],
    ...                           classes=[0, 1])
    >>> round(clf.privacy_spent_.epsilon, 3) <= 1.0
    True
    >>> bool(clf.score(X, y) > 0.7)
    True
    """

    _parameter_constraints = {
        **SHARED_CONSTRAINTS,
        "alpha": [Interval(Real, 0, None, closed="neither"), None],
        "algorithm": algorithm_constraint(CLASSIFIER),
    }

    _kind = CLASSIFIER

    def __init__(self, *, epsilon=1.0, delta=1e-5, data_norm=None, alpha=None,
                 algorithm="auto", feedback="full", batch_size="auto", release_every=1,
                 horizon=None, noise_calibration="tight", noise_sampler="discrete",
                 mechanism="auto", fit_intercept=True, random_state=None, ledger=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.alpha = alpha
        self.algorithm = algorithm
        self.feedback = feedback
        self.batch_size = batch_size
        self.release_every = release_every
        self.horizon = horizon
        self.noise_calibration = noise_calibration
        self.noise_sampler = noise_sampler
        self.mechanism = mechanism
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.ledger = ledger

    # ----------------------------------------------------------- labels
    def _set_classes(self, classes, y):
        if classes is None:
            warnings.warn(
                "classes is None: the label set was read off y, which leaks it. "
                "Pass classes=... to state it publicly.",
                PrivacyLeakWarning, stacklevel=user_stacklevel(),
            )
            classes = np.unique(y)
            self._infer("classes")
        classes = np.unique(np.asarray(classes))
        if classes.size < 2:
            # the labels may come from the data: count them, never echo them
            raise ValueError(
                f"PrivateOnlineLogistic needs at least 2 classes; got {classes.size} "
                f"class{'' if classes.size == 1 else 'es'}."
            )
        self.classes_ = classes

    def _encode(self, y):
        """Labels -> loss encoding (:func:`encode_labels`)."""
        return encode_labels(self.classes_, y)

    # ----------------------------------------------------------- learning
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Learn from one chunk of the stream and publish the updated model.

        The whole chunk is validated, clipped and checked against the
        labels and the horizon before anything changes: on any error the
        estimator is exactly as it was before the call.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            All the labels of the stream; required on the first call (the
            label set is public), checked against ``classes_`` afterwards.

        Returns
        -------
        self : object
        """
        check_budget(self, self._learn, (X, y, classes, False))  # before any row is read
        with Transaction(self):  # on any error, the state as it was
            self._learn(X, y, classes, False)
        return self

    def _learn(self, X, y, classes, trace):
        stream = self._live_stream()
        first_call = stream is None
        if first_call:  # a continuing stream's terms, and so these, are unchanged
            self._check_algorithm()
        inherited = False
        if first_call and classes is None and hasattr(self, "classes_"):
            classes, inherited = self.classes_, True  # a stream after fit keeps fit's labels
        if first_call and classes is None:
            raise ValueError(
                "classes must be passed on the first call to partial_fit (the "
                "label set is public information)."
            )
        X, y = self._validate_chunk(X, y, first_call)
        if first_call:  # later calls: every label must be in classes_ (_encode)
            check_classification_targets(y)
        self._check_horizon(X.shape[0], X, 0 if first_call else stream.n_seen)
        if first_call:
            algorithm = self._algorithm_for(stream=True)
            check_width(algorithm, X.shape[1] + self.fit_intercept)
            # ftrl / ftal rounds only take gradient sums, ls sums a Gram of the
            # caller's rows: their rows stay uncopied
            lazy = CLASSIFIER in ALGORITHMS[algorithm].lazy_rows
            stream = self._new_stream(GradientStream, X.shape[0], rows="lazy" if lazy else "copy")
            if inherited and getattr(self, "_classes_inferred", False):
                self._infer("classes")
            self._set_classes(classes, y)
            self._classes_inferred = "classes" in self._inferred
            stream.units = self._resolve_units(X)
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(
                f"classes={np.unique(classes).tolist()} differs from the first "
                f"call's {self.classes_.tolist()}."
            )
        encoded = self._encode(y)
        if first_call:
            self.algorithm_ = algorithm
            self._start_gradient_stream(stream, self._loss(algorithm),
                                        X.shape[1] + self.fit_intercept)
        models = stream.learn(X, encoded, trace)
        self._record_stream(stream, X.shape[0], *stream.release())
        return models, X

    def _publish(self, W):
        self.coef_, self.intercept_ = self._stream.units.to_original(W)

    # ----------------------------------------------------------- declared costs
    def _planned_stream(self, n_rows, n_features, args):
        """The stream a first call of ``n_rows`` rows of ``n_features`` would
        start (``args``: ``_learn``'s), its algorithm built from public
        quantities with a throw-away generator (nothing learned, the
        estimator untouched): its ``cost_after`` is the call's declared cost."""
        self._check_algorithm()
        classes = args[2]
        if classes is None:
            classes = self.classes_  # a stream after fit keeps fit's labels (or refuses)
        algorithm = self._algorithm_for(stream=True)
        units = self._public_units(labels=False)
        stream = self._planned_state(units, n_rows)
        batch_size = stream.batch_size
        stream.algorithm = self._gradient_algorithm(
            units, self._loss(algorithm, _n_classes(classes)), n_features + self.fit_intercept,
            batch_size, np.random.default_rng(0))
        return stream

    def _fit_event(self, n_rows, n_features, args):
        """The event ``fit`` on ``n_rows`` rows of ``n_features`` will record,
        from public quantities only (``classes=None``: the label set read
        off ``y``, as ``fit`` does, with its warning)."""
        self._check_algorithm(stream=False)
        classes = args[2] if args[2] is not None else np.unique(args[1])
        return self._fit_gradient_event(
            self._public_units(labels=False),
            self._loss(self._algorithm_for(stream=False), _n_classes(classes)), n_rows,
            n_features + self.fit_intercept, self._resolve_batch(n_rows, one_release=True))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, classes=None):
        """Learn from all of ``X`` and publish one model (one noisy release).

        Every row is used, whatever ``batch_size`` says.

        A dask array or dask DataFrame ``X`` (and ``y``: a dask array or
        Series, or numpy) is learned where its blocks are: the default model's
        gradient sums are computed block by block (on the workers of the
        active ``dask.distributed`` client) and the noise is added once per
        step here; the release, ``privacy_spent_`` and the ledger entry are
        those of the in-memory ``fit`` (:mod:`skdpol.linear_model._dask_fit`;
        the user guide's out-of-core page). Dask input needs ``data_norm`` and
        ``algorithm`` "auto" or "noisy-gd".

        Parameters
        ----------
        X : {array-like, sparse matrix}, dask array or dask DataFrame of shape (n_samples, n_features)
        y : array-like, dask array or dask Series of shape (n_samples,)
        classes : array-like, default=None
            The public label set; None reads it off ``y`` (with a warning).

        Returns
        -------
        self : object
        """
        self._transaction(self._fit, X, y, classes)
        return self

    def _fit(self, X, y, classes):
        if is_dask(X) or is_dask(y):  # per block on the cluster: _dask_fit
            return fit_dask(self, X, y, classes)
        self._check_algorithm(stream=False)
        X, y = validate_data(self, X, y, reset=True, dtype=np.float64, accept_sparse=ACCEPT_SPARSE)
        X = csr_rows(X)
        check_classification_targets(y)
        self.__dict__.pop("classes_", None)
        stream = self._begin_one_release(X.shape[0])
        self._set_classes(classes, y)
        self._classes_inferred = "classes" in self._inferred
        encoded = self._encode(y)
        units = stream.units = self._resolve_units(X)
        self.algorithm_ = self._algorithm_for(stream=False)
        check_width(self.algorithm_, X.shape[1] + self.fit_intercept)
        W, event = self._fit_gradient(stream, self._loss(self.algorithm_), units.rows(X),
                                      encoded, stream.batch_size)
        self._record_one_release(stream, X.shape[0], W, event)

    # ----------------------------------------------------------- using
    def decision_function(self, X):
        """Scores of the published model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes, the score of ``classes_[1]``.
        """
        check_is_fitted(self, "coef_")
        X = csr_rows(validate_data(self, X, reset=False, dtype=np.float64,
                                   accept_sparse=ACCEPT_SPARSE))
        return _decision(X, self.coef_, self.intercept_)

    def predict_proba(self, X):
        """Class probabilities under the published model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return _proba(self.decision_function(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Most probable class under the published model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return _predict(self.decision_function(X), self.classes_)

    def progressive_predict(self, X, y):
        """Predict each row with the model published just before it, then learn it.

        The "predict, then see the label" loop the seeds use for regret, one
        row per round (``batch_size=1``; call ``partial_fit`` with
        ``classes`` first). **Non-private diagnostic**: the predictions
        combine private models with the rows' own features. Every row's
        model counts as a release in ``privacy_spent_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        self._validate_params()
        if self.batch_size != 1 or self.release_every != 1:
            raise ValueError("progressive_predict needs batch_size=1 and release_every=1 "
                             "(it publishes a model before every row).")
        if getattr(self.__dict__.get("_stream"), "algorithm", None) is None:
            raise ValueError("call partial_fit with classes first.")
        models, Xv = self._transaction(self._learn, X, y, None, True)
        rows = self._stream.units.rows(Xv)
        scores = np.stack([row_dots(models[:, j], rows) for j in range(models.shape[1])],
                          axis=1) if issparse(rows) else np.einsum("nkd,nd->nk", models, rows)
        return _proba(scores[:, 0] if scores.shape[1] == 1 else scores)

    def public_model(self):
        """The shareable release: published parameters and ``privacy_spent_`` only.

        Returns
        -------
        model : PublicLinearClassifier
        """
        check_is_fitted(self, "coef_")
        return PublicLinearClassifier._from_release(self)



def _n_classes(classes):
    """The size of a public label set (refused, as ``_set_classes`` does, below 2)."""
    n_classes = np.unique(np.asarray(classes)).size
    if n_classes < 2:
        raise ValueError("PrivateOnlineLogistic needs at least 2 classes.")
    return n_classes
