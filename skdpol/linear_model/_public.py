"""The shareable release of a linear model."""

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import validate_data


class PublicLinearRegressor(RegressorMixin, BaseEstimator):
    """A published linear model: released parameters only, safe to pickle.

    Returned by :meth:`PrivateOnlineRegressor.public_model`. It holds
    ``coef_``, ``intercept_``, ``n_features_in_`` (and ``feature_names_in_``),
    ``n_samples_seen_`` and ``privacy_spent_``; no partial sums, no noise, no
    random state. It cannot learn further.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol import PrivateOnlineRegressor
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> y = X @ [1.0, -1.0, 0.5]
    >>> est = PrivateOnlineRegressor(epsilon=1.0, data_norm=4.0, y_bound=5.0,
    ...                              random_state=0).fit(X, y)
    >>> public = est.public_model()
    >>> bool(np.allclose(public.predict(X), est.predict(X)))
    True
    """

    def __init__(self):
        pass

    @classmethod
    def _from_release(cls, source):
        model = cls()
        for name in ("coef_", "intercept_", "n_features_in_", "feature_names_in_",
                     "n_samples_seen_", "privacy_spent_"):
            if hasattr(source, name):
                value = getattr(source, name)
                setattr(model, name, value.copy() if isinstance(value, np.ndarray) else value)
        return model

    def predict(self, X):
        if not hasattr(self, "coef_"):  # check_is_fitted wants a fit method
            raise NotFittedError("this PublicLinearRegressor holds no released model.")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_
