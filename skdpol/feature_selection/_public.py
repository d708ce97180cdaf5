"""The shareable release of a selector."""

from sklearn.feature_selection import SelectorMixin

from ..utils import PublicRelease


class PublicSubmodularSelector(SelectorMixin, PublicRelease):
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

    def _get_support_mask(self):
        return self._require("support_")
