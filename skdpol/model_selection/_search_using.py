"""Using a fitted :class:`~skdpol.model_selection.PrivateHyperparameterSearch`:
the released model's predictions and score."""

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils import ACCEPT_SPARSE, csr_rows


class _ReleasedModel:
    """The released model's methods (a mixin of the search)."""

    # ----------------------------------------------------------- using
    def _best(self, X):
        """The released model and X checked against what fit saw."""
        check_is_fitted(self, "privacy_spent_")
        if not isinstance(self.estimator, Pipeline):  # a Pipeline's first step checks X
            X = csr_rows(validate_data(self, X, reset=False, dtype=np.float64,
                                       accept_sparse=ACCEPT_SPARSE))
        if self.best_estimator_ is None:
            raise NotFittedError(
                "the search released no model (shape=inf, Poisson, drew no run; its cost "
                "was still spent).")
        return self.best_estimator_, X

    def __sklearn_is_fitted__(self):
        return hasattr(self, "privacy_spent_")

    def _estimator_has(attr):
        def check(self):
            return hasattr(self._final()[1], attr)

        return check

    def predict(self, X):
        """Predictions of the released model."""
        model, X = self._best(X)
        return model.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the released model (classifiers)."""
        model, X = self._best(X)
        return model.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Scores of the released model (classifiers)."""
        model, X = self._best(X)
        return model.decision_function(X)

    def score(self, X, y, sample_weight=None):
        """The released model's score on (X, y) (not private for private X, y)."""
        model, X = self._best(X)
        return model.score(X, y, sample_weight=sample_weight)
