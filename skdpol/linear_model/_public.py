"""The shareable release of a linear model."""

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.validation import validate_data

from ..utils import ACCEPT_SPARSE, csr_rows
from ..utils import PublicRelease


class _PublicRelease(PublicRelease):
    """A released linear model (weights on the columns or on a public map)."""

    # n_samples_learned_: the rows in the released model (with release_every
    # or rows waiting for their round, fewer than n_samples_seen_)
    _RELEASED = ("coef_", "intercept_", "n_features_in_", "feature_names_in_",
                 "n_samples_seen_", "n_samples_learned_", "privacy_spent_")

    def _validated(self, X):
        self._require("coef_")
        return csr_rows(validate_data(self, X, reset=False, dtype=np.float64,
                                      accept_sparse=ACCEPT_SPARSE))


class PublicLinearRegressor(RegressorMixin, _PublicRelease):
    """A published linear model: released parameters only, safe to pickle.

    Returned by :meth:`PrivateOnlineRegressor.public_model`. It holds
    ``coef_``, ``intercept_``, ``n_features_in_`` (and ``feature_names_in_``),
    ``n_samples_seen_``, ``n_samples_learned_`` and ``privacy_spent_``; no
    partial sums, no noise, no random state. It cannot learn further.

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

    def predict(self, X):
        return self._score_unchecked(self._validated(X))

    def _score_unchecked(self, X):
        # the prediction of already-validated rows (also the audit's fast path)
        return X @ self.coef_ + self.intercept_


class PublicKernelRegressor(RegressorMixin, _PublicRelease):
    """A published kernel model: the public feature map and released weights.

    Returned by :meth:`KernelPrivateOnlineRegressor.public_model`. It holds
    ``random_features_`` (the data-independent frequencies), ``coef_``,
    ``intercept_``, ``n_features_in_`` (and ``feature_names_in_``),
    ``n_samples_seen_``, ``n_samples_learned_`` and ``privacy_spent_``; no
    sums, iterate, noise or random state. It cannot learn further.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np
    >>> from skdpol import KernelPrivateOnlineRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2_000, 2))
    >>> y = np.sin(3 * X[:, 0])
    >>> est = KernelPrivateOnlineRegressor(y_bound=1.0, n_components=32,
    ...                                    random_state=0).fit(X, y)
    >>> public = pickle.loads(pickle.dumps(est.public_model()))
    >>> bool(np.array_equal(public.predict(X), est.predict(X)))
    True
    """

    _RELEASED = ("random_features_",) + _PublicRelease._RELEASED

    def predict(self, X):
        return self._score_unchecked(self._validated(X))

    def _score_unchecked(self, X):
        return kernel_predict(self.random_features_, self.coef_, self.intercept_, X)


def kernel_predict(features, coef, intercept, X):
    """Predictions of weights ``coef`` on the random-feature part of ``features``."""
    return features.transform(X)[:, : coef.size] @ coef + intercept


class PublicLinearClassifier(ClassifierMixin, _PublicRelease):
    """A published linear classifier: released parameters only, safe to pickle.

    Returned by :meth:`PrivateOnlineLogistic.public_model`: ``classes_``,
    ``coef_``, ``intercept_``, ``n_features_in_`` (and
    ``feature_names_in_``), ``n_samples_seen_``, ``n_samples_learned_``,
    ``privacy_spent_``; no gradient sums, iterates, noise or random state.
    It cannot learn further.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol import PrivateOnlineLogistic
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2_000, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = PrivateOnlineLogistic(data_norm=4.0, random_state=0).fit(X, y, classes=[0, 1])
    >>> public = clf.public_model()
    >>> bool(np.array_equal(public.predict(X), clf.predict(X)))
    True
    """

    _RELEASED = ("classes_",) + _PublicRelease._RELEASED

    def decision_function(self, X):
        return self._score_unchecked(self._validated(X))

    def _score_unchecked(self, X):
        return _decision(X, self.coef_, self.intercept_)

    def predict_proba(self, X):
        return _proba(self.decision_function(X))

    def predict(self, X):
        return _predict(self.decision_function(X), self.classes_)


def _decision(X, coef, intercept):
    scores = X @ coef.T + intercept
    return scores[:, 0] if scores.shape[1] == 1 else scores


def _proba(scores):
    if scores.ndim == 1:
        p = expit(scores)
        return np.column_stack([1.0 - p, p])
    return softmax(scores, axis=1)


def _predict(scores, classes):
    if scores.ndim == 1:
        return classes[(scores > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]

