"""What every shareable release (``public_model()``) shares: copying, and nothing else."""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError


class PublicRelease(BaseEstimator):
    """Copies the attributes named in ``_RELEASED`` from a live estimator.

    Subclasses list the released attributes; curator state is never named,
    so it never travels into the public object or its pickle.
    """

    _RELEASED = ()

    def __init__(self):
        pass

    @classmethod
    def _from_release(cls, source):
        model = cls()
        for name in cls._RELEASED:
            if hasattr(source, name):
                value = getattr(source, name)
                setattr(model, name, value.copy() if isinstance(value, np.ndarray) else value)
        return model

    def _require(self, name):
        # check_is_fitted wants a fit method, which a release does not have
        if not hasattr(self, name):
            raise NotFittedError(f"this {type(self).__name__} holds no release.")
        return getattr(self, name)
