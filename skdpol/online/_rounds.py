"""Rows -> rounds: the buffer every round-based algorithm shares.

A round is ``batch_size`` rows. Rows of an incomplete round wait, exactly and
unpublished, in underscore attributes (curator state) until it completes.
``horizon`` counts rounds; a call that would pass it raises
:class:`~skdpol.BudgetExhaustedError` before anything changes.

The end of a stream (:meth:`RoundBuffer.flush`) learns the waiting rows of
an incomplete round as a final round completed with *zero rows* (label 0).
Why this keeps every guarantee, whatever the algorithm: a zero row lies
within every bound a derivation assumes (norm 0 <= the row bound, label 0 in
[-1, 1], class index 0 a class), so the final round is an ordinary round of
``batch_size`` rows, b' of them real and b - b' public rows that belong to no
one. Every replace-one sensitivity (a round's mean gradient moves by 2 L / b,
a gradient sum by 2 L, a prefix-sum leaf by its bound) is the one derived for
a full round, and the round fits the planned rounds when the estimator plans
ceil(horizon rows / batch_size) of them. (Under a *mean* over the b' real rows
alone the sensitivity would be larger by b / b'; the zero rows avoid that.)
Under the linear losses a zero row's gradient is 0 (l'(0) times the zero
row), so it only dilutes the final round's mean step by b' / b; ``fit``
pads its last round the same way.
"""

import copy
import math
from abc import ABC, abstractmethod

import numpy as np

from ..exceptions import BudgetExhaustedError
from ..utils import row_block, stack_rows, zero_rows_like


class RoundBuffer(ABC):
    """Base class: split rows into rounds and run ``self._round`` on each.

    Subclasses implement ``_round(X, y)`` (one round's clipped rows and
    encoded labels), ``_publish()`` (make the model after the last round
    public) and the ``published`` property (the current public model).
    The rows of a round are clipped already; a generator never stops early
    (the remainder is stored once the rounds are done).
    """

    def __init__(self, *, n_features, n_outputs, batch_size, horizon):
        self.n_features = int(n_features)
        self.n_outputs = int(n_outputs)
        self.batch_size = int(batch_size)
        self.horizon = None if horizon is None else int(horizon)
        self.n_rounds = 0
        self._pending_X = np.empty((0, self.n_features))
        self._pending_y = np.empty(0)

    @property
    def n_rows_used(self):
        """Rows in completed rounds (the published model's data)."""
        return self.n_rounds * self.batch_size

    def flush(self):
        """Learn the waiting rows as a final round completed with zero rows
        (label 0; see the module notes) and publish. Returns the number of
        zero rows added (0 when no row was waiting: nothing changes)."""
        waiting = self._pending_X.shape[0]
        if not waiting:
            return 0
        pad = self.batch_size - waiting
        X = stack_rows([self._pending_X, zero_rows_like(self._pending_X, pad)])  # CSR stays CSR
        y = np.concatenate([self._pending_y, np.zeros(pad)])
        self._pending_X, self._pending_y = self._pending_X[:0], self._pending_y[:0]
        self.learn(X, y)
        return pad

    def check_room(self, n_rows):
        new_rounds = (self._pending_X.shape[0] + n_rows) // self.batch_size
        if self.horizon is not None and self.n_rounds + new_rounds > self.horizon:
            raise BudgetExhaustedError(
                f"{n_rows} more rows would make {self.n_rounds + new_rounds} rounds, "
                f"past horizon={self.horizon} rounds; nothing was learned."
            )

    def run(self, X, y):
        """Consume rows, yielding after each completed round (curator use)."""
        self.check_room(X.shape[0])
        b = self.batch_size
        waiting = self._pending_X.shape[0]
        start = 0
        if waiting and waiting + X.shape[0] >= b:  # complete the waiting round first
            start = b - waiting
            self._round(stack_rows([self._pending_X, X[:start]]),
                        np.concatenate([self._pending_y, y[:start]]))
            self.n_rounds += 1
            waiting = 0
            self._pending_X = self._pending_X[:0]
            self._pending_y = self._pending_y[:0]
            yield
        n_complete = (X.shape[0] - start) // b if not waiting else 0
        for r in range(n_complete):
            lo = start + r * b
            self._round(row_block(X, lo, lo + b), y[lo:lo + b])
            self.n_rounds += 1
            yield
        tail = start + n_complete * b
        # rows (an array, or CSR: stack_rows keeps sparse rows sparse)
        self._pending_X = stack_rows([self._pending_X, X[tail:]])
        self._pending_y = np.concatenate([self._pending_y, y[tail:]])

    def learn(self, X, y, trace=False):
        """Consume rows; with ``trace`` return the public model before each round.

        With ``trace`` every round's model is published (and accounted for);
        otherwise only the model after the last complete round is.
        """
        before = self.n_rounds
        models = []
        if trace:
            models.append(self.published.copy())
        for _ in self.run(X, y):
            if trace:
                self._publish()
                models.append(self.published.copy())
        if not trace:
            if self.n_rounds > before:
                self._publish()
            return None
        return np.array(models[:-1]).reshape(-1, self.n_outputs, self.n_features)

    @property
    @abstractmethod
    def published(self):
        """The current public model (k, d)."""

    @abstractmethod
    def _round(self, X, y):
        """Learn one round's clipped rows and encoded labels."""

    @abstractmethod
    def _publish(self):
        """Make the model after the last round public."""


class ReplacedState:
    """Cheap checkpoints for a round algorithm whose rounds *replace* every
    array they change (pending rows, iterates, the model; the prefix-sum
    mechanism's buffers, totals and noise pool) instead of writing it in
    place, and keep their prefix sums in ``self._tree``.

    A shallow copy then restores the algorithm exactly: it shares the arrays
    (none is ever written again) and gets its own copy of the mechanism,
    whose ``__copy__`` gives it its own generator (keyed from the stream's,
    never shared with the estimator's). ``checkpoint(memo)`` is the shell's
    transaction copy (:meth:`StreamState.checkpoint
    <skdpol.linear_model._streams.StreamState.checkpoint>`), about 10x cheaper
    than a deep copy of d-length state; a class that writes an array in place
    must not inherit this as it is: :class:`~skdpol.online._momentum.MomentumFTRL`
    (and the BLT's one-buffer step) write theirs in place only while no copy
    shares them, and their ``__copy__`` marks both sides as sharing.
    """

    def __copy__(self):
        """A checkpoint: restoring it undoes any later ``learn``."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._tree = copy.copy(self._tree)
        return clone

    def checkpoint(self, memo):
        """The transaction's copy (the class notes)."""
        clone = memo[id(self)] = self.__copy__()
        return clone


def project_ball(W, radius):
    """Euclidean projection of W onto the (Frobenius) ball of the given radius."""
    # np.add.reduce is what np.sum calls (the same pairwise sum) and
    # math.sqrt rounds as np.sqrt does, without the wrappers: once a round
    norm = math.sqrt(np.add.reduce(W * W, axis=None))
    return W * (radius / norm) if norm > radius else W


def uniform_in_ball(rng, shape, radius):
    """A point drawn uniformly from the Frobenius ball (data-independent)."""
    direction = rng.standard_normal(shape)
    direction /= np.linalg.norm(direction)
    return direction * radius * rng.random() ** (1.0 / direction.size)
