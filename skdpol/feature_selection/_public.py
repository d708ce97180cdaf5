"""The shareable release of a selector."""

from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.exceptions import NotFittedError


class PublicSubmodularSelector(SelectorMixin, BaseEstimator):
    """A published selection: released attributes only, safe to pickle.

    Returned by :meth:`PrivateSubmodularSelector.public_model`. It holds
    ``support_``, ``x_``, ``n_features_in_`` (and ``feature_names_in_``),
    ``n_samples_seen_`` and ``privacy_spent_``; no sums, noise or random
    state. ``get_support`` and ``transform`` work as on the live selector;
    it cannot learn further.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np
    >>> from skdpol import PrivateSubmodularSelector
    >>> X = np.random.default_rng(0).normal(size=(500, 4)) + [1, -1, 1, -1]
    >>> sel = PrivateSubmodularSelector(epsilon=2.0, random_state=0).fit(X)
    >>> public = pickle.loads(pickle.dumps(sel.public_model()))
    >>> bool((public.transform(X) == sel.transform(X)).all())
    True
    """

    _RELEASED = ("support_", "x_", "n_features_in_", "feature_names_in_",
                 "n_samples_seen_", "privacy_spent_")

    def __init__(self):
        pass

    @classmethod
    def _from_release(cls, source):
        model = cls()
        for name in cls._RELEASED:
            if hasattr(source, name):
                value = getattr(source, name)
                setattr(model, name, value.copy() if hasattr(value, "copy") else value)
        return model

    def _get_support_mask(self):
        if not hasattr(self, "support_"):  # check_is_fitted wants a fit method
            raise NotFittedError(f"this {type(self).__name__} holds no released selection.")
        return self.support_
