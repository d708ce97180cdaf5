"""Preprocessing for private pipelines: a private standard scaler, a public-range
scaler that reads no data, and the row-norm bound their output satisfies."""

from ._public import PublicRangeScaler, row_norm_bound
from ._scaler import PrivateStandardScaler

__all__ = ["PrivateStandardScaler", "PublicRangeScaler", "row_norm_bound"]
