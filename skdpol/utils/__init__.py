"""Validation and clipping helpers shared by the estimators."""

from ._release import PublicRelease
from ._state import run_transaction
from ._stream import StreamMixin
from ._validation import clip_labels, clip_rows, row_norms_max

__all__ = ["PublicRelease", "StreamMixin", "clip_labels", "clip_rows", "row_norms_max", "run_transaction"]
