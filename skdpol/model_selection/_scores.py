"""Bounded per-row validation scores for private selection, and their sensitivity.

The search releases ``mean_i s_i + N`` over the n_val validation rows, N a
discrete Gaussian calibrated to sensitivity ``1 / n_val`` and the run's rho
(:mod:`skdpol.model_selection._search`). That calibration holds for *any*
per-row score with s_i in [0, 1]: replacing one validation row changes one
term by at most 1, so the mean by at most 1 / n_val (n_val is public: the
split is drawn by position). Every score below is therefore mapped to
[0, 1], higher is better, and is clipped to [0, 1] after the mapping (a
NaN counts 0, the worst), so the range is enforced whatever the model
outputs. The range is what feeds the sensitivity: a raw loss of range
[0, L] costs the same as a [0, 1] score once divided by L, and dividing is
what the noise sees (a score with a wide range is noisier relative to the
differences between candidates).

* ``accuracy``: 1 if the predicted label is right, else 0.
* ``brier``: the multiclass Brier score, sum over the k classes of
  (p_k - [y = k])^2, lies in [0, 2] for any probability vector:
  (1 - p_y)^2 + sum_{k != y} p_k^2 <= (1 - p_y)^2 + (sum_{k != y} p_k)^2
  = 2 (1 - p_y)^2 <= 2;
  the score is ``1 - brier / 2``. For two classes the sum is
  2 (p_1 - y)^2, so the score is ``1 - (p_1 - y)^2``: one minus the usual
  binary Brier score in [0, 1].
* ``log_loss``: ``-log(max(p_y, p_min))`` lies in [0, log(1 / p_min)]
  (probabilities are clipped from below only; clipping from above at
  1 - p_min as scikit-learn does would only shrink the range); the score is
  ``1 - loss / log(1 / p_min)``. ``p_min`` is public (a parameter).
* ``clipped_mse`` (regressors): label and prediction clipped to
  [-b, b], b = the estimator's ``y_bound`` (public), so the squared error is
  at most 4 b^2; the score is ``1 - (y - y_hat)^2 / (4 b^2)``.
"""

import math
from abc import ABC, abstractmethod

import numpy as np
from sklearn.base import is_classifier, is_regressor


class BoundedScore(ABC):
    """A per-row validation score in [0, 1], higher is better (sensitivity of the mean 1 / n).

    Subclasses define :meth:`per_row`; :meth:`__call__` clips it to [0, 1]
    (NaN to 0) and averages.
    """

    name = None
    needs_proba = False
    task = "classifier"

    @abstractmethod
    def per_row(self, model, final, X, y):
        """Each validation row's score (clipped to [0, 1] by :meth:`clipped`)."""

    def __call__(self, model, final, X, y):
        """The mean of the clipped per-row scores on (X, y)."""
        return float(np.mean(self.clipped(model, final, X, y)))

    def clipped(self, model, final, X, y):
        s = np.asarray(self.per_row(model, final, X, y), dtype=np.float64)
        return np.clip(np.nan_to_num(s, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)

    @staticmethod
    def sensitivity(n_rows):
        """Replace-one sensitivity of the mean over ``n_rows`` rows: 1 / n_rows."""
        return 1.0 / n_rows

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self), tuple(sorted(vars(self).items()))))


class Accuracy(BoundedScore):
    """1 for a right label, 0 otherwise."""

    name = "accuracy"

    def per_row(self, model, final, X, y):
        return (model.predict(X) == y).astype(np.float64)


def _proba_of_label(model, final, X, y):
    """(probabilities, one-hot of y) in the order of the run's public ``classes_``."""
    proba = np.asarray(model.predict_proba(X), dtype=np.float64)
    index = np.searchsorted(final.classes_, y)  # every label is in classes (checked)
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y)), index] = 1.0
    return proba, onehot


class BrierScore(BoundedScore):
    """``1 - sum_k (p_k - [y = k])^2 / 2``; for two classes ``1 - (p_1 - y)^2``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.model_selection import BrierScore
    >>> class Model:  # any fitted classifier with predict_proba
    ...     classes_ = np.array([0, 1])
    ...     def predict_proba(self, X):
    ...         return np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
    >>> BrierScore().clipped(Model(), Model(), None, np.array([0, 1, 1])).round(4).tolist()
    [0.99, 0.96, 0.75]
    """

    name = "brier"
    needs_proba = True

    def per_row(self, model, final, X, y):
        proba, onehot = _proba_of_label(model, final, X, y)
        return 1.0 - 0.5 * np.sum((np.clip(proba, 0.0, 1.0) - onehot) ** 2, axis=1)


class ClippedLogLoss(BoundedScore):
    """``1 - log(1 / max(p_y, p_min)) / log(1 / p_min)``.

    Parameters
    ----------
    p_min : float, default=0.01
        In (0, 1): the floor of the probability of the true label; the
        per-row log-loss then lies in [0, log(1 / p_min)].

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.model_selection import ClippedLogLoss
    >>> class Model:
    ...     classes_ = np.array([0, 1])
    ...     def predict_proba(self, X):
    ...         return np.array([[0.9, 0.1], [0.999, 0.001], [0.5, 0.5]])
    >>> ClippedLogLoss(p_min=0.01).clipped(Model(), Model(), None, np.array([0, 1, 1])
    ...                                    ).round(4).tolist()
    [0.9771, 0.0, 0.8495]
    """

    name = "log_loss"
    needs_proba = True

    def __init__(self, p_min=0.01):
        if not 0.0 < float(p_min) < 1.0:
            raise ValueError(f"p_min must be in (0, 1), got {p_min!r}.")
        self.p_min = float(p_min)

    def __repr__(self):
        return f"ClippedLogLoss(p_min={self.p_min!r})"

    def per_row(self, model, final, X, y):
        proba, onehot = _proba_of_label(model, final, X, y)
        p_true = np.sum(np.clip(proba, 0.0, 1.0) * onehot, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = -np.log(np.maximum(p_true, self.p_min))
        return 1.0 - loss / math.log(1.0 / self.p_min)


class ClippedSquaredError(BoundedScore):
    """``1 - (clip(y) - clip(y_hat))^2 / (4 b^2)``, b the estimator's ``y_bound``."""

    name = "clipped_mse"
    task = "regressor"

    def per_row(self, model, final, X, y):
        b = float(final.y_bound)
        err = np.clip(np.asarray(y, dtype=np.float64), -b, b) - np.clip(model.predict(X), -b, b)
        return 1.0 - err * err / (4.0 * b * b)


SCORES = {"accuracy": Accuracy, "brier": BrierScore, "log_loss": ClippedLogLoss,
          "clipped_mse": ClippedSquaredError}
# The default for classifiers: a proper score of the probabilities, which
# ranks candidates when accuracy cannot (on unbalanced labels every
# candidate predicts the majority and scores alike); the Brier score over
# the clipped log-loss for its narrower range (less noise relative to the
# differences) and no floor to choose: docs/benchmarks/search.md.
DEFAULT_CLASSIFIER_SCORE = "brier"


def resolve_scoring(scoring, final):
    """The :class:`BoundedScore` for ``scoring`` ("auto", a name or an instance)."""
    if scoring == "auto":  # a classifier without probabilities keeps accuracy
        scoring = "clipped_mse" if not is_classifier(final) else (
            DEFAULT_CLASSIFIER_SCORE if hasattr(final, "predict_proba") else "accuracy")
    score = SCORES[scoring]() if isinstance(scoring, str) else scoring
    if score.task == "classifier" and not is_classifier(final):
        raise ValueError(f"scoring={score.name!r} needs a classifier.")
    if score.task == "regressor":
        if not is_regressor(final):
            raise ValueError(f"scoring={score.name!r} needs a regressor.")
        if getattr(final, "y_bound", None) is None:
            raise ValueError(
                "a regressor's validation score is clipped to its y_bound, which must "
                "be given (a public bound): set y_bound on the estimator.")
    if score.needs_proba and not hasattr(final, "predict_proba"):
        raise ValueError(f"scoring={score.name!r} needs predict_proba, which "
                         f"{type(final).__name__} does not have.")
    return score
