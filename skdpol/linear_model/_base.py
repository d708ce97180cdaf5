"""What the linear estimators share: bounds, transactions, accounting, and
the gradient-family algorithms (igd, giga, ftal, mi-ogd) behind ``algorithm``."""

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, Options, StrOptions

from ..accounting import PrivacySpent, epsilon_spent
from ..exceptions import BudgetExhaustedError, PrivacyLeakWarning
from ..online import fit_once, make_stream
from ..utils import clip_rows, row_norms_max, run_transaction


def make_rng(random_state):
    """A Generator from ``random_state`` (a RandomState gives 128 bits of seed)."""
    if isinstance(random_state, np.random.RandomState):
        random_state = int.from_bytes(random_state.bytes(16), "little")
    return np.random.default_rng(random_state)


# the constraints of the hyper-parameters both linear estimators share
SHARED_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {np.inf})],
    "delta": [Interval(Real, 0, 1, closed="left")],
    "data_norm": [Interval(Real, 0, None, closed="neither"), None],
    "alpha": [Interval(Real, 0, None, closed="neither")],
    "feedback": [StrOptions({"full", "bandit"})],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "horizon": [Interval(Integral, 1, None, closed="left"), None],
    "noise_calibration": [StrOptions({"tight", "paper"})],
    "noise_sampler": [StrOptions({"float", "discrete"})],
    "fit_intercept": ["boolean"],
    "random_state": ["random_state"],
}


class PrivateLinearMixin:
    """Shared machinery; the estimators hold no numerics of their own."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        for kind in (tags.regressor_tags, tags.classifier_tags):
            if kind is not None:
                kind.poor_score = True  # a noisy model, honestly declared
        tags.input_tags.sparse = False
        return tags

    # scales the calibrated noise of the gradient family; only the audit tests'
    # deliberately broken subclasses change it
    _noise_factor = 1.0

    # ----------------------------------------------------------- state
    def _transaction(self, method, *args):
        """Run ``method(*args)``; on any error restore the state as it was."""
        return run_transaction(self, method, *args)

    @property
    def _noise(self):
        # pure DP needs Laplace noise; epsilon=inf draws no noise at all
        return "laplace" if self.delta == 0 and not math.isinf(self.epsilon) else "gaussian"

    def _row_bound(self, data_norm):
        return math.sqrt(2.0) * data_norm if self.fit_intercept else data_norm

    def _resolve_data_norm(self, X):
        if self.data_norm is not None:
            return float(self.data_norm), True
        warnings.warn(
            "data_norm is None: the row-norm bound was read off the data, which "
            "leaks it and voids the guarantee for it. Pass data_norm.",
            PrivacyLeakWarning, stacklevel=4,
        )
        return row_norms_max(X) or 1.0, False

    def _check_horizon(self, n_rows):
        seen = getattr(self, "n_samples_seen_", 0)
        if self.horizon is not None and seen + n_rows > self.horizon:
            raise BudgetExhaustedError(
                f"this call's {n_rows} rows after the {seen} already seen would "
                f"pass horizon={self.horizon}; nothing was learned."
            )

    def _augment(self, X):
        """Clip rows to ``data_norm``, then append the intercept column (one copy)."""
        if not self.fit_intercept:
            return clip_rows(X, self._data_norm)
        d = X.shape[1]
        out = np.empty((X.shape[0], d + 1))
        out[:, :d] = X
        out[:, d] = self._data_norm
        sq_norms = np.einsum("ij,ij->i", X, X)
        over = sq_norms > self._data_norm**2
        if over.any():
            out[over, :d] *= (self._data_norm / np.sqrt(sq_norms[over]))[:, None]
        return out

    def _spent(self, event, releases):
        if math.isinf(self.epsilon):
            eps, method = math.inf, "none (epsilon=inf)"
        else:
            eps, method = epsilon_spent(event, self.delta)
            overspent = eps > self.epsilon * (1 + 1e-9)
            if self.noise_calibration == "paper" and overspent and not self._overspend_warned:
                self._overspend_warned = True  # once per stream, not once per call
                warnings.warn(
                    f"noise_calibration='paper' has spent epsilon={eps:.4g} > "
                    f"epsilon={self.epsilon}: the seed's formula under-noises here "
                    "(its noise scales like 1/sqrt(epsilon) where a Gaussian "
                    "mechanism needs 1/epsilon). Use the default calibration.",
                    PrivacyLeakWarning, stacklevel=5,
                )
        return PrivacySpent(
            epsilon=float(eps), delta=float(self.delta), accountant=method,
            bounds_trusted=self._bounds_trusted, releases=releases,
        )

    # ----------------------------------------------------------- releases
    def _leave_one_shot(self):
        """``partial_fit`` after ``fit`` starts a new stream over the new rows only:
        fit's rows stay in its one release (parallel composition)."""
        if getattr(self, "_one_shot", False):
            for name in ("_one_shot", "n_samples_seen_", "privacy_spent_", "_algo"):
                self.__dict__.pop(name, None)

    def _record_stream(self, n_rows, W, event):
        """Publish the stream's model after ``n_rows`` more rows, and its cost."""
        self.n_samples_seen_ = getattr(self, "n_samples_seen_", 0) + n_rows
        self._publish(W)
        self.privacy_spent_ = self._spent(event, self._releases)
        self._publish_mi()

    def _record_one_release(self, n_rows, W, event):
        """Publish ``fit``'s single model and its cost."""
        self._publish(W)
        self.n_samples_seen_ = n_rows
        self._one_shot = True
        self._releases = 1
        self.privacy_spent_ = self._spent(event, 1)
        self._publish_mi()

    # ----------------------------------------------------------- gradient family
    def _publish_mi(self):
        if self.algorithm == "mi-ogd" and hasattr(self, "_algo"):
            self.mutual_information_bound_ = self._algo.mutual_information_bound()
        else:
            self.__dict__.pop("mutual_information_bound_", None)

    def _check_gradient_params(self, stream=True):
        if self.noise_calibration == "paper":
            if self.algorithm == "mi-ogd":
                raise ValueError(
                    "noise_calibration='paper' is not defined for algorithm='mi-ogd': "
                    "seed 000 states a mutual-information bound, not a noise formula."
                )
            if stream and self.horizon is None:  # fit releases once: no horizon
                raise ValueError("noise_calibration='paper' needs a finite horizon.")
            if self.delta == 0 and self.algorithm not in ("ftal", "ftrl"):
                raise ValueError("noise_calibration='paper' needs delta > 0.")
        if self.feedback == "bandit" and self.algorithm != "mi-ogd":
            raise ValueError(
                f"feedback='bandit' is only defined for algorithm='mi-ogd', "
                f"not {self.algorithm!r}."
            )

    def _algorithm_params(self, loss, n_columns):
        row_bound = self._row_bound(self._data_norm)
        return dict(loss=loss, n_features=n_columns,
                    radius=loss.optimum_radius(self.alpha), alpha=self.alpha,
                    row_bound=row_bound, batch_size=self.batch_size,
                    epsilon=self.epsilon, delta=self.delta, noise=self._noise,
                    calibration=self.noise_calibration, feedback=self.feedback,
                    noise_factor=self._noise_factor, sampler=self.noise_sampler)

    def _start_gradient_stream(self, loss, n_columns):
        self._rng = make_rng(self.random_state)
        self._overspend_warned = False
        self._releases = 0
        rounds = None if self.horizon is None else max(1, self.horizon // self.batch_size)
        self._algo = make_stream(self.algorithm, **self._algorithm_params(loss, n_columns),
                                 horizon=rounds, rng=self._rng)

    def _learn_gradient(self, Xa, ya, trace):
        self._algo.check_room(Xa.shape[0])  # all checks done: from here on, mutate
        models = self._algo.learn(Xa, ya, trace=trace)
        self._releases += Xa.shape[0] if trace else 1
        return models

    def _fit_gradient(self, loss, Xa, ya):
        self._rng = make_rng(self.random_state)
        self._overspend_warned = False
        W, event, stream = fit_once(self.algorithm, Xa, ya,
                                    **self._algorithm_params(loss, Xa.shape[1]),
                                    rng=self._rng)
        if stream is not None:
            self._algo = stream
        return W, event


class StreamingRegressorMixin:
    """``partial_fit`` and ``fit`` of the regressors: validate, then one transaction.

    Subclasses implement ``_learn(X, y, progressive)`` and ``_fit(X, y)``.
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y):
        """Learn from one chunk of the stream and publish the updated model.

        The whole chunk is validated, clipped and checked against the horizon
        before anything changes: on any error the estimator is exactly as it
        was before the call.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._transaction(self._learn, X, y, False)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn from all of ``X`` and publish one model (one noisy release).

        ``horizon`` does not apply: ``fit`` releases once, whatever the size.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : object
        """
        self._transaction(self._fit, X, y)
        return self
