"""Warnings and errors raised by skdpol."""

__all__ = ["PrivacyLeakWarning", "PrivacyLeakError", "BudgetExhaustedError"]


class PrivacyLeakWarning(RuntimeWarning):
    """A release is not fully covered by the stated (epsilon, delta).

    Raised when a bound that the privacy guarantee relies on (``data_norm``,
    ``y_bound``) or the label set is inferred from the rows instead of being
    given as a parameter (the inferred value shapes the release, so the
    guarantee no longer covers it; ``privacy_spent_.bounds_trusted`` is then
    False), and when a calibration kept for reproduction
    (``noise_calibration="paper"``) spends more than the stated budget
    (``privacy_spent_`` reports the true cost).
    """


class PrivacyLeakError(ValueError):
    """A step would release values of the rows that no guarantee covers.

    Raised before any row is read, e.g. by
    :class:`~skdpol.model_selection.PrivateHyperparameterSearch` and
    :func:`skdpol.pipeline.check_public_pipeline` for a Pipeline step not
    known to be public (scikit-learn's ``StandardScaler`` publishes the exact
    mean of its training rows). The message names the step and how to
    declare it public (:func:`skdpol.pipeline.declare_public`).
    """


class BudgetExhaustedError(RuntimeError):
    """A call would take the stream past its planned ``horizon``.

    The estimator's state is left exactly as it was before the call: nothing
    was learned from the rejected rows and no budget was spent on them.
    """
