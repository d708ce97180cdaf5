"""Preprocessing for private pipelines: a private standard scaler, a public-range
scaler that reads no data, preprocessing built from a table's public schema,
private ranges for the columns a schema cannot bound publicly, and the
row-norm bound their output satisfies."""

from ._bounds import PrivateRangeEstimator, PrivateSchema, privatise_schema
from ._bounds_compose import fit_with_ranges
from ._public import PublicRangeScaler, row_norm_bound
from ._scaler import PrivateStandardScaler
from ._scaler_public import PublicStandardScaler
from ._schema import PublicPreprocessing, from_schema, public_bins, public_numeric, read_schema

__all__ = ["PrivateRangeEstimator", "PrivateSchema", "PrivateStandardScaler",
           "PublicPreprocessing", "PublicRangeScaler", "PublicStandardScaler", "fit_with_ranges",
           "from_schema", "privatise_schema",
           "public_bins", "public_numeric", "read_schema", "row_norm_bound"]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._bounds_compose import (  # noqa: E402, F401
    calibrate_model_epsilon, composed_spent, default_bounds_share, planned_bounds_event,
)
_internal = (
    'calibrate_model_epsilon', 'composed_spent', 'default_bounds_share', 'planned_bounds_event',
    'public_bins', 'read_schema'
)
