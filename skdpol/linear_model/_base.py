"""What the linear estimators share: bounds, transactions, accounting and tags.

The algorithm behind ``algorithm`` (noise family, mechanism, the
gradient family's building and feeding) is :mod:`._algorithms`."""

import math
import os
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import NotFittedError
from sklearn.utils import assert_all_finite
from sklearn.utils._param_validation import Interval, Options, StrOptions
from sklearn.utils.validation import _num_features, _num_samples, validate_data

from ..accounting import PrivacySpent, epsilon_spent
from ..exceptions import BudgetExhaustedError, PrivacyLeakWarning
from ..ledger import PrivacyLedger
from ..ledger import HEAD, check_budget, record_release
from ..utils import StreamMixin, row_norms_max
from ..utils import ACCEPT_SPARSE, csr_rows
from ..utils import Transaction
from ..utils import check_terms
from ..utils import user_stacklevel
from ._dask_fit import declared_fit_event, is_dask
from ._algorithms import GRADIENT_ROUND, AlgorithmBuilderMixin  # noqa: F401  (GRADIENT_ROUND: its old home)
from ._streams import StreamState
from ._units import UnitSpace, to_original_units  # noqa: F401  (to_original_units: its old home)


def make_rng(random_state):
    """A Generator from ``random_state`` (a RandomState gives 128 bits of seed)."""
    if isinstance(random_state, np.random.RandomState):
        random_state = int.from_bytes(random_state.bytes(16), "little")
    return np.random.default_rng(random_state)


# the constraints of the hyper-parameters both linear estimators share
SHARED_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "data_norm": [Interval(Real, 0, None, closed="neither"), None],
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "feedback": [StrOptions({"full", "bandit"})],
    "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "release_every": [Interval(Integral, 1, None, closed="left")],
    "horizon": [Interval(Integral, 1, None, closed="left"), None],
    "noise_calibration": [StrOptions({"tight", "paper"})],
    "noise_sampler": [StrOptions({"float", "discrete"})],
    "mechanism": [StrOptions({"auto", "tree", "blt"})],
    "fit_intercept": ["boolean"],
    "random_state": ["random_state"],
    "ledger": [PrivacyLedger, str, os.PathLike, None],
}

# fit's rounds for the one-release paths that work in rounds (POL): with
# batch_size="auto", n rows make about FIT_ROUNDS rounds (the last one padded
# with zero rows, which carry no data and no gradient, so every row is used)
FIT_ROUNDS = 64


def warn_delta(delta, n_rows):
    """PrivacyLeakWarning when delta is not below 1/n (a public rule of thumb)."""
    if 0 < delta and n_rows * delta >= 1:
        warnings.warn(
            f"delta={delta:g} is not below 1/n = 1/{n_rows}: a mechanism that publishes "
            "one person's row in the clear satisfies such a delta. Choose delta well "
            "below 1 / (number of rows), e.g. 1/n^1.1.",
            PrivacyLeakWarning, stacklevel=user_stacklevel(),
        )


class PrivateLinearMixin(AlgorithmBuilderMixin, StreamMixin):
    """Shared machinery; the estimators hold no numerics of their own.

    **Units.** Every estimator learns in *unit space*
    (:class:`~skdpol.linear_model._units.UnitSpace`, resolved when a stream
    starts and held by it): rows divided by ``data_norm`` and clipped to norm
    1, labels divided by ``y_bound`` and clipped to [-1, 1], and the released
    model mapped back.

    **Streams.** The estimator holds one live stream, ``_stream``
    (:mod:`._streams`): the shell validates a chunk and hands it to the
    stream, which learns; the shell publishes. ``fit``, and a ``partial_fit``
    that starts a stream, replace it.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        for kind in (tags.regressor_tags, tags.classifier_tags):
            if kind is not None:
                kind.poor_score = True  # a noisy model, honestly declared
        tags.input_tags.sparse = True  # CSR / CSC, never densified (utils._sparse)
        return tags

    # ----------------------------------------------------------- state
    def _transaction(self, method, *args):
        """Run ``method(*args)``; on any error restore the state as it was.

        With a ledger budget, the call's cost is checked before any row is read.
        (``partial_fit`` writes the same inline, a frame less deep.)"""
        check_budget(self, method, args)
        with Transaction(self):
            return method(*args)

    def _declared_event(self, method, args):
        """(event, ledger head) the call ``method(*args)`` (``_learn``,
        ``_fit`` or ``_flush``) will record, from public quantities only:
        parameters, the call's shape and, for a live stream, its rounds so
        far (:meth:`._streams.StreamState.cost_after`). A call that starts a
        stream states the cost of a new stream (:meth:`_planned_stream`: its
        algorithm built from public quantities with a throw-away generator,
        fed nothing), ``fit`` its one release (:meth:`_fit_event`; on dask
        input :func:`._dask_fit.declared_fit_event`); both start a new ledger
        branch (head None). ``flush()`` states the stream's final round.
        Raises what the real call would (changed terms, the horizon, a
        refused combination); None for an empty call (the real call refuses
        it)."""
        name = getattr(method, "__name__", None)
        if name == "_flush":
            stream = self._flushable_stream()
            return stream.cost_after(0, finish=True), self.__dict__.get(HEAD)
        if name == "_fit" and (is_dask(args[0]) or is_dask(args[1])):
            return declared_fit_event(self, *args), None  # fit starts a new branch
        if name not in ("_learn", "_fit"):
            return None
        n_rows = _num_samples(args[0])
        if n_rows < 1:
            return None  # the real call refuses it
        if name == "_fit":
            return self._fit_event(n_rows, _num_features(args[0]), args), None
        # the regressors' progressive path and the classifier's trace publish
        # every round (the last argument); the kernel model's never does
        trace = bool(args[-1]) and type(self)._learn_traces
        stream = self._live_stream()  # checks the stream's terms
        if stream is None:
            self._check_horizon(n_rows)
            stream = self._planned_stream(n_rows, _num_features(args[0]), args)
            return stream.cost_after(n_rows, trace), None
        self._check_horizon(n_rows, None, stream.n_seen)
        stream.algorithm.check_room(n_rows)
        return stream.cost_after(n_rows, trace), self.__dict__.get(HEAD)

    def _public_units(self, labels):
        """A :class:`UnitSpace` for declared costs: the bounds given, or 1 in
        place of a bound read off the data (a cost depends on the unit
        space's row bound and intercept only, never on the bounds)."""
        data_norm = 1.0 if self.data_norm is None else float(self.data_norm)
        y_bound = None
        if labels:
            y_bound = 1.0 if self.y_bound is None else float(self.y_bound)
        return UnitSpace(data_norm, y_bound, self.fit_intercept)

    _learn_traces = True  # does ``_learn``'s last argument publish every round?

    def _resolve_data_norm(self, X):
        if self.data_norm is not None:
            return float(self.data_norm)
        warnings.warn(
            "data_norm is None: the row-norm bound was read off the data, which "
            "leaks it and voids the guarantee for it. Pass data_norm.",
            PrivacyLeakWarning, stacklevel=user_stacklevel(),
        )
        self._infer("data_norm")
        return row_norms_max(X) or 1.0

    def _resolve_units(self, X, y=None):
        """The stream's :class:`UnitSpace`: bounds from the parameters, or read
        off the data with a warning (``data_norm`` first, then ``y_bound`` for
        a regressor, whose labels ``y`` are given; a classifier passes none)."""
        data_norm = self._resolve_data_norm(X)
        if y is None:
            return UnitSpace(data_norm, None, self.fit_intercept)
        if self.y_bound is not None:
            return UnitSpace(data_norm, float(self.y_bound), self.fit_intercept)
        warnings.warn(
            "y_bound is None: the label bound was read off the data, which "
            "leaks it and voids the guarantee for it. Pass y_bound.",
            PrivacyLeakWarning, stacklevel=user_stacklevel(),
        )
        self._infer("y_bound")
        return UnitSpace(data_norm, float(np.max(np.abs(y), initial=0.0)) or 1.0,
                         self.fit_intercept)

    def _validate_chunk(self, X, y, first_call, **kwargs):
        """``validate_data`` for a stream chunk (``kwargs``: its other options).

        Sparse X (CSR or CSC; other formats are converted) comes back as
        canonical CSR: rows are what every path slices. Later chunks skip
        scikit-learn's finiteness pass over X: the clipping pass computes
        every row's norm anyway (a sparse row's from its nonzeros) and raises
        scikit-learn's error on NaN / infinity (``clip_rows_in_place``,
        ``utils._sparse``) before anything is released. The first call keeps
        it, as bounds may be read off X.
        """
        X, y = validate_data(self, X, y, reset=first_call, dtype=np.float64,
                             ensure_all_finite=first_call, accept_sparse=ACCEPT_SPARSE,
                             **kwargs)
        return csr_rows(X), y

    def _check_horizon(self, n_rows, X=None, seen=0):
        """Refuse a call that would pass the horizon after ``seen`` rows of the
        stream. ``X``, when given, is a chunk whose finiteness scikit-learn's
        validation skipped: a bad chunk is reported as such first (the
        clipping pass would have found it)."""
        if self.horizon is not None and seen + n_rows > self.horizon:
            if X is not None:
                assert_all_finite(X, estimator_name=type(self).__name__, input_name="X")
            raise BudgetExhaustedError(
                f"this call's {n_rows} rows after the {seen} already seen would "
                f"pass horizon={self.horizon}; nothing was learned."
            )

    def _resolve_batch(self, n_rows, one_release=False):
        """Rows per round: the parameter, or for "auto" n / FIT_ROUNDS (fit's
        rounds) or :meth:`_auto_round` of the first call (a stream); a
        stream's round is ``release_every`` times that (one release per
        round of every release_every calls: :mod:`._streams`). Row counts
        are public."""
        if self.batch_size != "auto":
            batch = int(self.batch_size)
        elif one_release:
            return -(-int(n_rows) // FIT_ROUNDS)
        else:
            batch = self._auto_round(max(int(n_rows), 1))
        if one_release:
            return batch
        return batch * getattr(self, "release_every", 1)

    def _rounds(self, batch_size):
        """Planned rounds of a stream of ``batch_size``-row rounds (None:
        unbounded): ceil(horizon / batch_size), the last one the final,
        incomplete round that the horizon's call learns (:meth:`flush`)."""
        return None if self.horizon is None else -(-self.horizon // batch_size)

    def _spent(self, event, stream):
        if math.isinf(self.epsilon):
            eps, method = math.inf, "none (epsilon=inf)"
        else:
            eps, method = epsilon_spent(event, self.delta)
            overspent = eps > self.epsilon * (1 + 1e-9)
            if self.noise_calibration == "paper" and overspent and not stream.overspend_warned:
                stream.overspend_warned = True  # once per stream, not once per call
                warnings.warn(
                    f"noise_calibration='paper' has spent epsilon={eps:.4g} > "
                    f"epsilon={self.epsilon}: the seed's formula under-noises here "
                    "(its noise scales like 1/sqrt(epsilon) where a Gaussian "
                    "mechanism needs 1/epsilon). Use the default calibration.",
                    PrivacyLeakWarning, stacklevel=user_stacklevel(),
                )
        inferred = self._inferred
        return PrivacySpent(
            epsilon=float(eps), delta=float(self.delta), accountant=method,
            bounds_trusted=not inferred, releases=stream.releases, inferred=inferred,
            seeded=self.random_state is not None,  # utils._stream.is_seeded
        )

    # ----------------------------------------------------------- streams
    @property
    def batch_size_(self):
        """Rows per round of the live stream (``fit``'s release has none)."""
        stream = self.__dict__.get("_stream")
        if stream is None or stream.one_release:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute 'batch_size_'")
        return stream.batch_size

    def _live_stream(self):
        """The stream this call continues, its terms checked; None when the
        call starts one.

        ``partial_fit`` after ``fit`` starts a new stream over the new rows
        only: fit's rows stay in its one release (parallel composition). A
        call that continues a stream first checks that its terms are
        unchanged: a switch of ``algorithm`` must not start a second stream
        beside the first."""
        stream = self.__dict__.get("_stream")
        if stream is None or stream.one_release:
            return None
        check_terms(self, self._stream_terms)
        # a stream finished by its horizon refuses more rows as it always did
        # (_check_horizon: "would pass horizon"); one finished by flush() here
        if stream.finished and (self.horizon is None or stream.n_seen < self.horizon):
            raise BudgetExhaustedError(
                f"this stream is finished: flush() learned its last rows "
                f"({stream.n_seen} in all) and published its final model; "
                "nothing was learned. Start a new stream with sklearn.base.clone(est) "
                "(or fit)."
            )
        return stream

    def _finished_why(self, stream):
        if self.horizon is not None and stream.n_seen == self.horizon:
            return f"the call that reached horizon={self.horizon}"
        return "flush()"

    def _new_stream(self, kind, n_rows, **options):
        """Start a stream of class ``kind`` (:mod:`._streams`) for a first call
        of ``n_rows`` rows: parameters frozen, generator derived, round size
        resolved. It replaces the estimator's stream (and so whatever the last
        one held)."""
        self._begin_stream()
        release_every = getattr(self, "release_every", 1)
        stream = self._stream = kind(batch_size=self._resolve_batch(n_rows), **options,
                                     release_every=release_every, horizon=self.horizon)
        if self._kind == "regressor":
            self._check_release_every(self.algorithm_)
        return stream

    def _planned_state(self, units, n_rows):
        """The :class:`StreamState` a first call of ``n_rows`` rows would
        start (:meth:`_new_stream`'s round size, ``release_every`` and
        horizon), for a declared cost: no algorithm yet, the estimator
        untouched."""
        if self._kind == "regressor":  # the kernel model names its algorithm by rounds
            self._check_release_every(self._algorithm_for(stream=True))
        return StreamState(units, self._resolve_batch(n_rows),
                           release_every=getattr(self, "release_every", 1),
                           horizon=self.horizon)

    def _check_release_every(self, algorithm):
        """The regressor's refusal of release_every > 1 with per-row igd."""
        release_every = getattr(self, "release_every", 1)
        if release_every != 1 and algorithm == "igd":
            raise ValueError(
                f"release_every={release_every} needs rounds of release_every rows or "
                "more, and algorithm='igd' on the squared loss takes one row a round: "
                "use release_every=1, or another algorithm.")

    def _record_stream(self, stream, n_rows, W, event, rows_used):
        """Publish the stream's model after ``n_rows`` more rows, and its cost."""
        seen = stream.n_seen = stream.n_seen + n_rows
        self.n_samples_seen_ = seen
        self.n_samples_learned_ = rows_used
        self.n_samples_waiting_ = seen - rows_used
        # the regressor's centred stream holds its first rows by design
        # (skdpol.online._centred; n_samples_waiting_ counts them): no warning
        # once a round's rows are in (before that, the round is what waits)
        held = stream.batch_size <= seen < getattr(stream.algorithm, "centre_rows", 0)
        if rows_used == 0 and stream.n_calls >= stream.release_every and not held:
            chosen, advice = (
                (" (chosen by batch_size='auto' from the horizon and the width)",
                 "Pass a smaller batch_size, call flush() at the end of the stream")
                if self.batch_size == "auto" else
                ("", "Use batch_size='auto' or a smaller batch_size"))
            warnings.warn(
                f"no round of {stream.batch_size} rows{chosen} is complete yet: the "
                f"published model has learned from none of the {seen} rows seen, which "
                f"wait for their round. {advice}, or fit().", UserWarning,
                stacklevel=user_stacklevel(),
            )
        if seen * self.delta >= 1 > (seen - n_rows) * self.delta:
            warn_delta(self.delta, seen)  # once, when the stream passes 1/delta rows
        self._publish(W)
        self.privacy_spent_ = self._spent(event, stream)
        self._publish_mi(stream)
        record_release(self, event)  # last: a refusal undoes the call

    # ----------------------------------------------------------- the end
    def flush(self):
        """Learn the rows of the incomplete last round, publish, end the stream.

        ``partial_fit`` learns rows in rounds of ``batch_size_`` rows; rows
        of a round not yet complete wait (``n_samples_waiting_``). At the end
        of a stream shorter than ``horizon`` (or with ``horizon=None``),
        ``flush()`` learns them as a final round and publishes the model of
        every row seen; the call that reaches ``horizon`` does the same by
        itself. The final round is an ordinary round of ``batch_size_`` rows,
        completed with zero rows that belong to no one (sums-based streams
        add the waiting rows' sums as one more leaf), so its replace-one
        sensitivity and the noise are those of every round; its cost is in
        ``privacy_spent_`` and the ledger like any release's. With
        ``release_every`` > 1 it also publishes rounds completed since the
        last release.

        After ``flush()`` the stream is finished: ``partial_fit`` raises
        :class:`~skdpol.BudgetExhaustedError` and changes nothing. Start a
        new stream with ``sklearn.base.clone(est)`` (or ``fit``).

        Returns
        -------
        self : object

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before any ``partial_fit``.
        ValueError
            After ``fit`` (one release, every row used), or on a stream
            already finished; the estimator is unchanged.

        Examples
        --------
        >>> import numpy as np
        >>> from skdpol import PrivateOnlineRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(2_500, 3))
        >>> y = X @ [1.0, -2.0, 0.5]
        >>> est = PrivateOnlineRegressor(data_norm=4.0, y_bound=8.0, batch_size=1_000,
        ...                              random_state=0)
        >>> for start in range(0, 2_500, 1_000):  # rounds of 1,000: 500 rows wait
        ...     est = est.partial_fit(X[start:start + 1_000], y[start:start + 1_000])
        >>> est.n_samples_learned_, est.n_samples_waiting_
        (2000, 500)
        >>> est.flush().n_samples_learned_, est.n_samples_waiting_
        (2500, 0)
        """
        check_budget(self, self._flush, ())  # the ledger's budget, before anything changes
        with Transaction(self):
            self._flush()
        return self

    def _flushable_stream(self):
        """The live stream ``flush()`` ends; a clear error when there is none."""
        stream = self.__dict__.get("_stream")
        if stream is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance has no stream yet: call "
                "partial_fit before flush().")
        if stream.one_release:
            raise ValueError(
                "flush() ends a partial_fit stream; this model was made by fit(), "
                "which learns every row in its single release: nothing waits.")
        if stream.finished:
            raise ValueError(
                f"flush(): this stream is already finished ({self._finished_why(stream)} "
                "learned its last rows); nothing changed.")
        check_terms(self, self._stream_terms)
        return stream

    def _flush(self):
        stream = self._flushable_stream()
        stream.finish()
        stream.releases += 1  # flush publishes once
        self._record_stream(stream, 0, *stream.release())

    def _begin_one_release(self, n_rows):
        """``fit``: a new one-release stream (:class:`._streams.StreamState`,
        replacing any stream); returns it, its round size resolved."""
        self._begin_stream(one_release=True)
        stream = self._stream = StreamState(batch_size=self._resolve_batch(n_rows, one_release=True),
                                            one_release=True)
        warn_delta(self.delta, n_rows)
        return stream

    def _record_one_release(self, stream, n_rows, W, event):
        """Publish ``fit``'s single model and its cost."""
        self._publish(W)
        stream.n_seen = self.n_samples_seen_ = self.n_samples_learned_ = n_rows
        self.n_samples_waiting_ = 0
        stream.releases = 1
        self.privacy_spent_ = self._spent(event, stream)
        self._publish_mi(stream)
        record_release(self, event)  # last: a refusal undoes the call


class StreamingRegressorMixin:
    """``partial_fit`` and ``fit`` of the regressors: validate, then one transaction.

    Subclasses implement ``_learn(X, y, progressive)`` and ``_fit(X, y)``.
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y):
        """Learn from one chunk of the stream and publish the updated model.

        The whole chunk is validated, clipped and checked against the horizon
        before anything changes: on any error the estimator is exactly as it
        was before the call.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        check_budget(self, self._learn, (X, y, False))  # before any row is read
        with Transaction(self):  # on any error, the state as it was
            self._learn(X, y, False)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn from all of ``X`` and publish one model (one noisy release).

        ``horizon`` does not apply: ``fit`` releases once, whatever the size.

        A dask array or dask DataFrame ``X`` (and ``y``: a dask array or
        Series, or numpy) is learned where its blocks are: the default model's
        gradient sums are computed block by block (on the workers of the
        active ``dask.distributed`` client) and the noise is added once per
        step here; the release, ``privacy_spent_`` and the ledger entry are
        those of the in-memory ``fit`` (:mod:`skdpol.linear_model._dask_fit`;
        the user guide's out-of-core page). Dask input needs ``data_norm``
        and ``y_bound`` and ``algorithm`` "auto" or "noisy-gd".

        Parameters
        ----------
        X : {array-like, sparse matrix}, dask array or dask DataFrame of shape (n_samples, n_features)
        y : array-like, dask array or dask Series of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._transaction(self._fit, X, y)
        return self
