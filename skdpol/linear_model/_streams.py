"""The live stream a linear estimator holds: one object, replaced to reset.

The shell validates a chunk and hands it to its stream's ``learn``; the
stream maps the rows into unit space (its
:class:`~skdpol.linear_model._units.UnitSpace`), feeds its algorithm, and
owns the rounds, the mechanism, the noise and the published state. Starting
a stream (a first ``partial_fit``, ``fit``, ``partial_fit`` after ``fit``)
is building a new one; nothing is reset attribute by attribute.

Two kinds behind one interface (:class:`LinearStream`):

* :class:`SufficientStatisticStream`: PQFTL's private sums (the regressor's
  ``"ftl"``). PQFTL moves the raw rows to unit space itself (uncopied float
  sums when no row needs clipping, else its exact grid: one copy of the
  chunk), so it gets the raw rows and the unit space's scales.
* :class:`GradientStream`: the gradient family (and the kernel model's
  algorithms, whose shell maps its rows by the public feature map): rows
  mapped (copied, or uncopied :class:`~skdpol.linear_model._rows.UnitRows`),
  labels mapped, then the algorithm's ``learn``. The classifier's "ls"
  (:mod:`skdpol.online._lsq`, a sufficient-statistic algorithm) takes the
  same path: it sums copied unit rows and encoded labels in rounds.

The stream object, its algorithm and the estimator's generator are the
curator state (:data:`skdpol.utils._state.LIVE_STATE`): deep-copied together
by the transaction, refreshed on restore, never published.
"""

from typing import Protocol


class LinearStream(Protocol):
    """What a linear estimator's shell needs from its live stream.

    Attributes
    ----------
    units : UnitSpace
        The stream's bounds (frozen when it starts).
    batch_size : int
        Rows per round.
    one_release : bool
        ``fit``'s single release (a later ``partial_fit`` starts a new stream).
    n_seen : int
        Rows consumed.
    releases : int
        Models published so far.
    algorithm : object
        The online algorithm (:mod:`skdpol.online`): rounds, mechanism,
        noise and published state.
    """

    units: object
    batch_size: int
    one_release: bool
    n_seen: int
    releases: int
    algorithm: object

    def learn(self, X, y, trace=False):
        """Learn validated rows and labels (user units); with ``trace``, the
        (n, k, d) models published before each row."""

    def cost_after(self, n_rows, trace=False):
        """The cost ``release`` will state after ``learn`` of ``n_rows`` more
        rows, from public counts only (no row read, nothing changed)."""

    def release(self):
        """What the shell publishes after a call: the current unit-space model
        (an array, or PQFTL's deferred :class:`~skdpol.online._ftl.RidgeRelease`),
        the cost of everything published so far (a ``DpEvent``) and the rows in
        completed rounds (the model's data)."""


class StreamState:
    """A stream's own state: its bounds, round size, counters and algorithm.

    ``fit``'s single release is one too (``one_release=True``; its
    ``algorithm`` is the stream :func:`skdpol.online.fit_once` ran, if any).

    Parameters
    ----------
    units : UnitSpace or None
        Set once when the bounds are resolved (they may be read off the
        first chunk, after the stream's generator is derived).
    batch_size : int or None
        Rows per round.
    one_release : bool, default=False
    """

    def __init__(self, units=None, batch_size=None, one_release=False):
        self.units = units
        self.batch_size = batch_size
        self.one_release = one_release
        self.algorithm = None
        self.n_seen = 0
        self.releases = 0
        self.overspend_warned = False  # the paper calibration's warning: once per stream

    def release(self):
        """(published model, its cost, rows used): one call for the three,
        read on every ``partial_fit``."""
        algorithm = self.algorithm
        return algorithm.published, algorithm.event(), algorithm.n_rows_used

    def cost_after(self, n_rows, trace=False):
        """The cost :meth:`release` will state after ``learn`` of ``n_rows``
        more rows (``trace`` as ``learn``'s), from public counts only: the
        rounds complete by then (rows seen, waiting, per round). Reads no row
        and changes nothing; the ledger checks its budget with it."""
        algorithm = self.algorithm
        waiting = self.n_seen - algorithm.n_rows_used
        rounds = algorithm.n_rounds + (waiting + int(n_rows)) // self.batch_size
        event_after = getattr(algorithm, "event_after", None)  # POCP: per release
        if event_after is not None:
            return event_after(rounds, trace)
        return algorithm.event(rounds)  # the others: a function of the rounds


class SufficientStatisticStream(StreamState):
    """PQFTL's stream: raw rows and the unit space's scales to its ``learn``;
    its release is solved when first read (a stream read once pays once)."""

    def release(self):
        ftl = self.algorithm
        return ftl.deferred_release(), ftl.event(), ftl.n_rows_used

    def learn(self, X, y, trace=False):
        ftl, units = self.algorithm, self.units
        ftl.check_room(X.shape[0])  # all checks done: from here on, mutate
        # rows X / data_norm clipped to norm 1, labels y / y_bound clipped to
        # [-1, 1], as UnitSpace.rows / UnitSpace.labels, on PQFTL's grid
        models = ftl.learn(X, y, trace=trace, row_scale=units.row_scale,
                           label_scale=units.label_scale)
        self.releases += X.shape[0] if trace else 1
        return models


class GradientStream(StreamState):
    """A gradient-family algorithm's stream (RoundBuffer subclasses, POCP):
    rows and labels mapped into unit space, then ``learn(rows, labels, trace)``.

    Parameters
    ----------
    units, batch_size, one_release
        As :class:`StreamState`.
    rows : {"copy", "lazy", "mapped"}, default="copy"
        How rows reach the algorithm: :meth:`UnitSpace.rows` (a copy),
        :meth:`UnitSpace.lazy_rows` (uncopied, for rounds that only take
        gradient sums), or as given (the kernel model's random features,
        computed by its shell and of norm 1 already).
    """

    def __init__(self, units=None, batch_size=None, one_release=False, *, rows="copy"):
        super().__init__(units, batch_size, one_release)
        self.rows = rows

    def learn(self, X, y, trace=False):
        units, how = self.units, self.rows
        if how == "copy":
            rows = units.rows(X)
        elif how == "lazy":
            rows = units.lazy_rows(X)
        else:
            rows = X
        labels = units.labels(y)
        algorithm = self.algorithm
        algorithm.check_room(X.shape[0])  # all checks done: from here on, mutate
        models = algorithm.learn(rows, labels, trace=trace)
        self.releases += X.shape[0] if trace else 1
        return models
