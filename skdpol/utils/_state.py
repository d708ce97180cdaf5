"""All-or-nothing updates of an estimator's state."""

import copy

# the mutable curator state of every estimator (algorithm objects and the RNG)
LIVE_STATE = ("_algo", "_ftl", "_rng")


def run_transaction(obj, method, *args):
    """Run ``method(*args)``; on any error restore ``obj.__dict__`` as it was.

    The mutable curator state is deep-copied *together*, so objects it
    shares (an algorithm holding the estimator's generator) stay shared.
    """
    saved = dict(obj.__dict__)
    saved.update(copy.deepcopy({k: saved[k] for k in LIVE_STATE if k in saved}))
    try:
        return method(*args)
    except BaseException:
        obj.__dict__.clear()
        obj.__dict__.update(saved)
        raise
