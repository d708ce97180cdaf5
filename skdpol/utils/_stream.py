"""What surrounds a stream's mechanisms: its noise source, its frozen terms,
and what a restored copy may and may not reuse.

Three holes an independent review found, closed here once for every estimator:

* **Seeds.** An int ``random_state`` used to re-seed the noise identically
  for every stream of an estimator (``fit`` then ``partial_fit``, or two
  streams over different people), so knowing one stream's rows revealed the
  other's noise. Each stream now derives its own generator from the seed and
  a per-estimator stream counter (:func:`stream_rng`).
* **Terms.** Bounds, budget, algorithm and sampler shape the calibration of
  the noise already drawn; changing one mid-stream clipped rows at one bound
  into a tree calibrated for another. The parameters are frozen when a
  stream starts (:func:`frozen_terms`) and a continuing call that finds them
  changed is refused (:func:`check_terms`), never mixed.
* **Restores.** A live estimator's pickle carries its noise keys and RNG, so
  two continuations of one checkpoint added identical noise: the difference
  of their releases cancelled the noise and exposed the rows that differed.
  With ``random_state=None`` a restored (unpickled or deep-copied) estimator
  now draws fresh noise for everything not yet released
  (:func:`refresh_noise`); nodes already released keep theirs, so no value
  is ever published twice under different noise. With an int seed the
  continuation stays bit-exact (reproducible runs, not for deployment; the
  estimator's ``privacy_spent_.seeded`` says so).
"""

from functools import lru_cache

import numpy as np
from sklearn.exceptions import NotFittedError

from ._state import LIVE_STATE


def is_seeded(random_state):
    """True when ``random_state`` makes the noise reproducible (not OS entropy)."""
    return random_state is not None


def stream_rng(random_state, stream_index):
    """The noise generator of an estimator's ``stream_index``-th stream (0-based).

    * None: fresh OS entropy every time.
    * int: ``SeedSequence(seed, spawn_key=(k,))`` for the k-th stream; the
      first stream (k = 0) keeps ``default_rng(seed)``, so reproduced runs of
      a single stream are unchanged. Streams of one estimator never share
      noise; two *estimators* built with the same int do (that is what a
      seed means: never deploy with one).
    * RandomState instance: 128 bits drawn from it (it advances, so each
      stream gets new ones).
    """
    if isinstance(random_state, np.random.RandomState):
        random_state = int.from_bytes(random_state.bytes(16), "little")
    if random_state is None or stream_index == 0:
        return np.random.default_rng(random_state)
    seed = np.random.SeedSequence(int(random_state), spawn_key=(int(stream_index),))
    return np.random.default_rng(seed)


@lru_cache(maxsize=None)
def _param_names(cls):
    # scikit-learn's get_params reads the constructor's signature on every
    # call (~0.1 ms); a stream checks its terms on every partial_fit
    return tuple(cls._get_param_names())


def frozen_terms(estimator):
    """The parameters a stream runs under (a copy, compared by :func:`check_terms`):
    ``get_params(deep=False)``, with the parameter names cached per class."""
    return {name: getattr(estimator, name) for name in _param_names(type(estimator))}


def _same(a, b):
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.random.RandomState):
        return False  # a different generator object: not the stream's noise source
    try:
        return bool(np.all(a == b))
    except (TypeError, ValueError):
        return False


_MISSING = object()


def check_terms(estimator, terms):
    """Refuse a call that continues a stream under changed parameters.

    Raises
    ------
    ValueError
        Naming every parameter that changed since the stream started. The
        message holds parameter values only (public), never data.
    """
    names = _param_names(type(estimator))
    if len(terms) == len(names):
        # the common case, every parameter the very object the stream started
        # with (a plain loop: it runs on every partial_fit)
        for name in names:
            if getattr(estimator, name) is not terms.get(name, _MISSING):
                break
        else:
            return
    now = frozen_terms(estimator)
    changed = sorted(k for k in set(now) | set(terms) if not _same(now.get(k), terms.get(k)))
    if changed:
        detail = ", ".join(f"{k}={terms.get(k)!r} -> {now.get(k)!r}" for k in changed)
        raise ValueError(
            f"{type(estimator).__name__}: parameters changed mid-stream ({detail}). "
            "A stream's bounds, budget, algorithm and noise are fixed when it starts: "
            "set them back, or call fit() (or clone the estimator) to start a new "
            "stream, whose releases compose with this stream's."
        )


def _live_objects(roots):
    """Every skdpol object and numpy Generator reachable from ``roots``."""
    seen, stack, found = set(), list(roots), []
    while stack:
        obj = stack.pop()
        if id(obj) in seen or obj is None:
            continue
        seen.add(id(obj))
        if isinstance(obj, np.random.Generator):
            found.append(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif type(obj).__module__.startswith("skdpol.") and hasattr(obj, "__dict__"):
            found.append(obj)
            stack.extend(vars(obj).values())
    return found


def refresh_noise(state):
    """Give restored curator state fresh noise for everything not yet released.

    Every numpy Generator in ``state`` (the estimator's ``__dict__``) is
    re-seeded *in place* from OS entropy (objects that share one generator
    keep sharing it), and every object with a ``refresh_noise(rng)`` method
    (the prefix-sum trees, whose node noise comes from secret keys) is asked
    to switch to a fresh key for the nodes it has not released yet.
    """
    roots = [state[k] for k in LIVE_STATE if k in state]
    fresh = np.random.default_rng()
    for obj in _live_objects(roots):
        if isinstance(obj, np.random.Generator):
            obj.bit_generator.state = type(obj.bit_generator)(
                int.from_bytes(fresh.bytes(32), "little")).state
        elif callable(getattr(obj, "refresh_noise", None)):
            obj.refresh_noise(fresh)


class StreamMixin:
    """A stream's life cycle, shared by every estimator.

    * :meth:`_begin_stream` when ``fit`` or a first ``partial_fit`` starts a
      stream: freezes the parameters and derives the stream's generator
      (``fit`` always uses stream 0, so refitting with an int seed is
      reproducible -- scikit-learn's idempotence contract; streams begun by
      ``partial_fit`` take 1, 2, ... and never share ``fit``'s noise);
    * :meth:`_continue_stream` on every later ``partial_fit``: refuses
      changed parameters;
    * unpickling or deep-copying a live estimator with ``random_state=None``
      gives it fresh noise for everything not yet released.
    """

    def __getattr__(self, name):
        # reached only when the normal lookup fails. Before anything is
        # published privacy_spent_ is "not fitted", the error scikit-learn
        # users catch (NotFittedError is also an AttributeError, so hasattr
        # still answers False)
        if name == "privacy_spent_":
            raise NotFittedError(
                f"This {type(self).__name__} has published nothing yet, so it has spent "
                "no privacy: call fit or partial_fit before reading privacy_spent_.")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}",
                             name=name, obj=self)

    def __copy__(self):
        # a shallow copy shares the live objects: it is not a restore, and
        # refreshing them would change the original's noise too
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def __setstate__(self, state):
        super().__setstate__(state)
        if not is_seeded(self.__dict__.get("random_state")):
            refresh_noise(self.__dict__)

    def _begin_stream(self, *, one_release=False):
        index = 0
        if not one_release:
            index = self._n_streams = getattr(self, "_n_streams", 0) + 1
        self._stream_terms = frozen_terms(self)
        self.__dict__.pop("_ledger_head", None)  # a new stream is a new ledger branch
        self._inferred = ()
        self._rng = stream_rng(self.random_state, index)
        return self._rng

    def _continue_stream(self):
        check_terms(self, self._stream_terms)

    def _infer(self, name):
        """Record that ``name`` was read off the data (it shapes the release)."""
        self._inferred = (*getattr(self, "_inferred", ()), name)
