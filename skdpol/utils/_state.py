"""All-or-nothing updates of an estimator's state."""

import copy

import numpy as np

# the mutable curator state of every estimator: the live stream of the linear
# estimators (skdpol.linear_model._streams), the algorithm object of the
# selector, and the RNG
LIVE_STATE = ("_stream", "_algo", "_rng")


def run_transaction(obj, method, *args):
    """Run ``method(*args)``; on any error restore ``obj.__dict__`` as it was
    (:class:`Transaction`)."""
    with Transaction(obj):
        return method(*args)


def copy_generator(rng):
    """A numpy ``Generator`` copied as ``copy.deepcopy`` copies it: the same
    bit generator type and state (buffered bits included) and a copy of its
    seed sequence (or none, for a generator built from a key), so it draws
    on as the original would and pickles to the same bytes.

    Why not ``copy.deepcopy``: unpickling builds the new bit generator
    unseeded first, drawing a seed from the operating system's entropy only
    to overwrite that state; here it is built from a constant seed and then
    given the pickle's state (~12-17 us against ~27 warm; inside a busy
    stream the entropy draw measured up to ~0.2 ms, and every transaction
    checkpoints a BLT's generator). Not for a copy that must keep objects
    shared through a ``deepcopy`` memo (the transaction's own ``_rng``).
    """
    bits = rng.bit_generator
    clone = type(bits)(0)  # a constant seed (no entropy drawn), replaced next
    saved = bits.__reduce__()[2]  # what pickle and deepcopy restore: (state, seed_seq)
    if isinstance(saved, tuple):  # the state dict is built fresh; the sequence is shared
        saved = (saved[0], copy.deepcopy(saved[1]))
    clone.__setstate__(saved)
    return np.random.Generator(clone)


class Transaction:
    """``with Transaction(obj):`` on any error, restore ``obj.__dict__`` as it was.

    The mutable curator state is deep-copied *together* (one memo), so
    objects it shares (an algorithm holding the estimator's generator) stay
    shared. An object with a ``checkpoint(memo)`` method gives its own copy
    instead (:meth:`skdpol.linear_model._streams.StreamState.checkpoint`).

    numpy's floating-point reports are switched off for the whole call: an
    overflow, underflow or invalid operation on the rows (a label within a
    factor ``y_bound`` of the largest float, a subnormal feature) would
    otherwise surface as a ``RuntimeWarning`` -- or, under a user's
    ``np.seterr(all="raise")``, a ``FloatingPointError`` -- for one row and
    not for its neighbour, and warnings and errors are part of what an
    observer sees. Every private path clips or rejects what such an operation
    could produce (NaN/inf rows are refused by an explicit check, overflowed
    norms clip the row to zero), so nothing is lost by silencing them here.

    A context manager rather than a function taking the method: the
    estimators' call chains stay a frame shallower.
    """

    __slots__ = ("_obj", "_saved", "_errstate")

    def __init__(self, obj):
        self._obj = obj

    def __enter__(self):
        saved = dict(self._obj.__dict__)
        memo = {}  # one memo: objects the live state shares stay shared in the copies
        for name in LIVE_STATE:
            if name in saved:
                value = saved[name]
                # an object may offer a cheaper copy that restores it as well
                # (``checkpoint(memo)``: a stream whose algorithm replaces its
                # state instead of writing it in place); else a deep copy
                checkpoint = getattr(value, "checkpoint", None)
                if checkpoint is not None:
                    saved[name] = checkpoint(memo)
                elif isinstance(value, np.random.Generator):
                    # deepcopy's copy, or the one the memo already holds (a
                    # stream deep-copied above that shares it), without its
                    # throw-away seeding from the OS's entropy (copy_generator)
                    if id(value) not in memo:
                        memo[id(value)] = copy_generator(value)
                    saved[name] = memo[id(value)]
                else:
                    saved[name] = copy.deepcopy(value, memo)
        self._saved = saved
        self._errstate = np.errstate(all="ignore")
        self._errstate.__enter__()
        return self

    def __exit__(self, exc_type, exc, traceback):
        self._errstate.__exit__(exc_type, exc, traceback)
        if exc_type is not None:  # any BaseException: restore, and let it through
            state = self._obj.__dict__
            state.clear()
            state.update(self._saved)
        return False


class InPlaceArrays:
    """A mixin for state whose compiled steps write its arrays in place
    while it alone holds them (``_owned``; :mod:`skdpol.mechanisms._blt_kernel`,
    :mod:`skdpol.online._momentum_kernel`).

    A checkpoint (``__copy__``) shares the arrays with its original, so
    :meth:`_disown` marks both sides: each one's next step works on copies,
    which it then owns. ``_owned`` says which objects of this process share
    arrays, not what the state is worth: it is left out of pickles (a
    refused call's checkpoint clears it), and an unpickled object, like one
    that never had the flag, takes the class's False and copies once.
    """

    _owned = False

    def _disown(self, clone):
        """``clone``, a copy sharing this object's arrays: neither owns them."""
        self._owned = clone._owned = False
        return clone

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_owned", None)
        return state

