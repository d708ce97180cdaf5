"""PublicStandardScaler: the shareable release of a fitted PrivateStandardScaler."""

import numpy as np
from scipy.sparse import issparse
from sklearn.base import OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import validate_data

from ..utils import PublicRelease


def refuse_sparse(X):
    """Standardising centres every column (0 maps to -mean_ / scale_), which
    would make sparse X dense: refused with the reason (the statistics could
    be summed from the nonzeros, but the output could not stay sparse)."""
    if issparse(X):
        raise TypeError(
            "PrivateStandardScaler does not take sparse X: it centres every column, "
            "so 0 maps to -mean_ / scale_ and every row would become dense. For sparse "
            "features use PublicRangeScaler with bounds symmetric about 0 (lo = -hi), "
            "which scales the nonzeros, or pass X dense.")


class StandardiseMixin:
    """``transform`` / ``inverse_transform`` of a fitted scaler and of its
    release; ``_check_released()`` raises when there is no release yet."""

    def transform(self, X):
        """Clip to the bounds, centre by ``mean_`` and divide by ``scale_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features)
        """
        self._check_released()
        refuse_sparse(X)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        lo, hi = self.bounds_
        return (np.clip(X, lo, hi) - self.mean_) / self.scale_

    def inverse_transform(self, X):
        """Map standardised values back (within the bounds).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        self._check_released()
        refuse_sparse(X)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X * self.scale_ + self.mean_


class PublicStandardScaler(StandardiseMixin, OneToOneFeatureMixin, TransformerMixin,
                           PublicRelease):
    """A published standard scaler: released attributes only, safe to pickle.

    Returned by :meth:`PrivateStandardScaler.public_model`. It holds
    ``bounds_``, ``mean_``, ``var_``, ``scale_``, ``n_features_in_`` (and
    ``feature_names_in_``), ``n_samples_seen_`` and ``privacy_spent_``; not
    the ``random_state`` nor the ``ledger`` of the scaler it was made from (a
    seed regenerates the noise). ``transform`` and ``inverse_transform`` work
    as on the fitted scaler; it cannot fit. A :class:`~skdpol.pipeline.StreamPipeline`
    publishes a frozen, fitted ``PrivateStandardScaler`` step as this.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np
    >>> from skdpol.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(50.0, 10.0, size=(2_000, 2))
    >>> scaler = PrivateStandardScaler(bounds=(0.0, 100.0), random_state=0).fit(X)
    >>> public = pickle.loads(pickle.dumps(scaler.public_model()))
    >>> bool((public.transform(X) == scaler.transform(X)).all())
    True
    >>> "random_state" in public.get_params()
    False
    """

    _RELEASED = ("bounds_", "mean_", "var_", "scale_", "n_features_in_", "feature_names_in_",
                 "n_samples_seen_", "privacy_spent_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False  # a release: nothing to fit
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def _check_released(self):
        self._require("scale_")
