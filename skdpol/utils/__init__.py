"""Validation and clipping helpers shared by the estimators."""

from ._validation import (
    check_privacy_params,
    clip_labels,
    clip_rows,
    row_norms_max,
)

__all__ = ["check_privacy_params", "clip_labels", "clip_rows", "row_norms_max"]
