"""PublicStandardScaler: the shareable release of a fitted PrivateStandardScaler."""

import numpy as np
from sklearn.base import OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import validate_data

from ..utils import PublicRelease


def standardise(model, X):
    """``(clip(X, lo, hi) - mean_) / scale_`` of a fitted scaler or its release."""
    X = validate_data(model, X, reset=False, dtype=np.float64)
    lo, hi = model.bounds_
    return (np.clip(X, lo, hi) - model.mean_) / model.scale_


def unstandardise(model, X):
    """``X * scale_ + mean_`` (values back within the bounds' units)."""
    X = validate_data(model, X, reset=False, dtype=np.float64)
    return X * model.scale_ + model.mean_


class PublicStandardScaler(OneToOneFeatureMixin, TransformerMixin, PublicRelease):
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

    def transform(self, X):
        """Clip to the bounds, centre by ``mean_`` and divide by ``scale_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features)
        """
        self._require("scale_")
        return standardise(self, X)

    def inverse_transform(self, X):
        """Map standardised values back (within the bounds).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
        """
        self._require("scale_")
        return unstandardise(self, X)
