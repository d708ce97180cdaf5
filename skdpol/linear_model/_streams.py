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
  same path: it sums uncopied rows (``UnitRows``: one Gram of the
  caller's rows per round) and encoded labels in rounds.

The stream object, its algorithm and the estimator's generator are the
curator state (:data:`skdpol.utils._state.LIVE_STATE`): deep-copied together
by the transaction, refreshed on restore, never published.

Releases every k calls (``release_every``)
-------------------------------------------
With ``release_every=k`` the estimator resolves its rounds k times larger
(``batch_size_`` = k x the round ``batch_size`` gives) and plans
ceil(horizon / batch_size_) of them; the stream learns on every call (rows
go into their round, complete rounds into the algorithm, exactly as with
k = 1) but publishes only on its k-th, 2k-th, ... call, at the horizon and
at :meth:`StreamState.finish`. Between releases the shell re-publishes the
last release (model, cost, rows learned) unchanged: nothing new is released,
so no new cost is stated.

Accounting. A round of k b rows is one leaf of the prefix-sum mechanism (one
gradient step of the gradient family, taken at the last published model),
so the mechanism runs over T / k leaves instead of T: it is the same
mechanism over a k times shorter horizon, each leaf summing the
contributions of k rounds of b rows. Under replace-one neighbours one row
still lies in exactly one leaf and moves it by the same bound (the leaves
are sums: 2 L for a gradient sum, PQFTL's joint sensitivity for its sums;
the mean-based rounds of output perturbation and noisy GD divide by k b, so
theirs shrinks), so the sensitivity is unchanged and the noise per release
is that of a T / k-leaf stream: fewer tree levels, or a BLT whose column
norms run over T / k steps. The intermediate models of a round that is not
published (the gradient family's points inside a release's rounds) are
post-processing of the same leaves and are covered by the same event.

The end of a stream (:meth:`StreamState.finish`: ``flush()`` or the call
that reaches the horizon) learns the waiting rows as a final round (see
:meth:`skdpol.online._rounds.RoundBuffer.flush` and
:meth:`skdpol.online.PrivateQuadraticFTL.flush` for its sensitivity) and
publishes; the stream then takes no more rows.
"""

import copy
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
    release_every : int, default=1
        Publish on every ``release_every``-th call (the module notes).
    horizon : int or None, default=None
        The stream's planned rows: the call that reaches it learns every
        waiting row (:meth:`finish`).
    """

    # class defaults: a stream pickled before these existed reads them
    release_every = 1  # publish on every release_every-th call
    horizon = None  # the stream's planned rows (None: unbounded)
    n_calls = 0  # calls that learned
    finished = False  # finish() ran: every row learned, no more rows taken
    padding = 0  # zero rows that completed the final round (no one's rows)
    _last = None  # the last release (release_every > 1)

    def __init__(self, units=None, batch_size=None, one_release=False, *, release_every=1,
                 horizon=None):
        self.units = units
        self.batch_size = batch_size
        self.one_release = one_release
        self.algorithm = None
        self.n_seen = 0
        self.releases = 0
        self.overspend_warned = False  # the paper calibration's warning: once per stream
        if release_every != 1:
            self.release_every = release_every
        if horizon is not None:
            self.horizon = horizon

    def checkpoint(self, memo):
        """A copy of the stream that restores it (the shell's transaction,
        :class:`~skdpol.utils.Transaction`; ``memo`` its deep-copy memo).

        A deep copy, unless the algorithm offers ``checkpoint(memo)`` ("ls"
        and "ftrl-momentum", :class:`~skdpol.online._rounds.ReplacedState`:
        every array they hold is replaced, never written in place, so their
        copy shares them). Then the stream's own attributes
        are copied shallowly: they are numbers, the frozen unit space and
        the last release (a tuple, replaced, never changed)."""
        algorithm_checkpoint = getattr(self.algorithm, "checkpoint", None)
        if algorithm_checkpoint is None:
            return copy.deepcopy(self, memo)
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        clone.__dict__.update(self.__dict__)
        clone.algorithm = algorithm_checkpoint(memo)
        return clone

    def _current(self):
        """(model, cost, rows learned) of the algorithm as it stands."""
        algorithm = self.algorithm
        return algorithm.published, algorithm.event(), algorithm.n_rows_used - self.padding

    def release(self):
        """(published model, its cost, rows used): one call for the three,
        read on every ``partial_fit``. With ``release_every`` > 1, the last
        release, unchanged, on a call that does not publish."""
        if self.release_every == 1:  # every call publishes (inline: one frame less)
            algorithm = self.algorithm
            return (algorithm.published, algorithm.event(),
                    algorithm.n_rows_used - self.padding)
        return self._gated()

    def _gated(self):
        """:meth:`release` with ``release_every`` > 1: a new snapshot on a
        call that publishes (every release_every-th, or the stream's end),
        else the last one."""
        if self.finished or not self.n_calls % self.release_every:
            self._last = self._snapshot()
        W, event, rows = self._last
        # the shell publishes a copy: a published object shared with the
        # stream would stop being shared once a failed call restores the
        # stream's deep copy (and the estimator would pickle differently)
        return (W.copy() if hasattr(W, "copy") else copy.deepcopy(W)), event, rows

    def _snapshot(self):
        # a copy: the gradient family's published array is its live iterate
        W, event, rows = self._current()
        return (W.copy() if hasattr(W, "copy") else W), event, rows

    def _before_learn(self, n_rows):
        """On a stream's first call with ``release_every`` > 1: the release
        the calls before its first publication re-publish is the algorithm's
        initial model (data-independent, zero rounds)."""
        if self._last is None and self.release_every != 1:
            self._last = self._snapshot()

    def _after_learn(self, n_rows):
        """Count the call; at the horizon, learn every waiting row (finish)."""
        self.n_calls += 1
        if self.horizon is not None and self.n_seen + n_rows == self.horizon:
            self.finish(strict=False)

    def finish(self, strict=True):
        """Learn the waiting rows of an incomplete round as a final round and
        end the stream (``flush()``, or the call that reaches the horizon,
        ``strict=False``). The next :meth:`release` publishes. An algorithm
        without ``flush`` cannot learn a final round: ``flush()`` says so
        (nothing changes); at the horizon its waiting rows stay unlearned
        (``n_samples_waiting_`` counts them)."""
        flush = getattr(self.algorithm, "flush", None)
        if flush is None and strict:
            raise ValueError(
                f"flush(): {type(self.algorithm).__name__} cannot learn an incomplete "
                "final round; nothing changed.")
        if flush is not None:
            self.padding += flush()
        self.finished = True

    def cost_after(self, n_rows, trace=False, finish=False):
        """The cost :meth:`release` will state after ``learn`` of ``n_rows``
        more rows (``trace`` as ``learn``'s; ``finish``: then :meth:`finish`),
        from public counts only: the rounds complete by then (rows seen,
        waiting, per round; the final round at the horizon or a finish) and
        whether the call publishes. Reads no row and changes nothing; the
        ledger checks its budget with it."""
        algorithm = self.algorithm
        waiting = self.n_seen - algorithm.n_rows_used
        complete, rest = divmod(waiting + int(n_rows), self.batch_size)
        rounds = algorithm.n_rounds + complete
        final = False  # then the final round (finish), released after the call's rounds
        finishing = finish or (self.horizon is not None and self.n_seen + n_rows == self.horizon)
        if finishing:
            final = rest > 0 and hasattr(algorithm, "flush")
        elif (self.n_calls + 1) % self.release_every:
            # no release: the last one's cost, nothing new (on a stream's first
            # call, the initial model's, :meth:`_before_learn`)
            return (algorithm.event() if self._last is None else self._last[1])
        waits = getattr(algorithm, "waits", None)  # the centred stream holds its first rows
        if not finishing and waits is not None and waits(waiting + int(n_rows)):
            rounds = algorithm.n_rounds
        event_after = getattr(algorithm, "event_after", None)  # POCP: per release
        if event_after is not None:
            return event_after(rounds, trace, final=True) if final else event_after(rounds, trace)
        return algorithm.event(rounds + final)  # the others: a function of the rounds


class SufficientStatisticStream(StreamState):
    """PQFTL's stream: raw rows and the unit space's scales to its ``learn``;
    its release is solved when first read (a stream read once pays once)."""

    def release(self):
        if self.release_every == 1:
            ftl = self.algorithm
            return ftl.deferred_release(), ftl.event(), ftl.n_rows_used
        return self._gated()

    def _current(self):
        # PQFTL's flush adds no zero rows: its n_rows_used counts real rows
        ftl = self.algorithm
        return ftl.deferred_release(), ftl.event(), ftl.n_rows_used

    def learn(self, X, y, trace=False):
        ftl, units = self.algorithm, self.units
        ftl.check_room(X.shape[0])  # all checks done: from here on, mutate
        if self.release_every != 1:
            self._before_learn(X.shape[0])
        # rows X / data_norm clipped to norm 1, labels y / y_bound clipped to
        # [-1, 1], as UnitSpace.rows / UnitSpace.labels, on PQFTL's grid
        models = ftl.learn(X, y, trace=trace, row_scale=units.row_scale,
                           label_scale=units.label_scale)
        self._after_learn(X.shape[0])
        self.releases += X.shape[0] if trace else (not self.n_calls % self.release_every
                                                   or self.finished)
        return models


class GradientStream(StreamState):
    """A gradient-family algorithm's stream (RoundBuffer subclasses, POCP):
    rows and labels mapped into unit space, then ``learn(rows, labels, trace)``.

    Parameters
    ----------
    units, batch_size, one_release, release_every, horizon
        As :class:`StreamState`.
    rows : {"copy", "lazy", "mapped"}, default="copy"
        How rows reach the algorithm: :meth:`UnitSpace.rows` (a copy),
        :meth:`UnitSpace.lazy_rows` (uncopied, for rounds that only take
        gradient sums), or as given (the kernel model's random features,
        computed by its shell and of norm 1 already).
    """

    def __init__(self, units=None, batch_size=None, one_release=False, *, rows="copy",
                 release_every=1, horizon=None):
        super().__init__(units, batch_size, one_release, release_every=release_every,
                         horizon=horizon)
        self.rows = rows

    def learn(self, X, y, trace=False):
        units, how = self.units, self.rows
        if how == "copy":
            rows = units.rows(X)
        elif how == "lazy":
            rows = units.lazy_rows(
                X, sparse_blocks=getattr(self.algorithm, "sparse_blocks", False))
        else:
            rows = X
        labels = units.labels(y)
        algorithm = self.algorithm
        algorithm.check_room(X.shape[0])  # all checks done: from here on, mutate
        if self.release_every != 1:
            self._before_learn(X.shape[0])
        models = algorithm.learn(rows, labels, trace=trace)
        self._after_learn(X.shape[0])
        self.releases += X.shape[0] if trace else (not self.n_calls % self.release_every
                                                   or self.finished)
        return models
