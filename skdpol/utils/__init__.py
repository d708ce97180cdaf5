"""Validation and clipping helpers shared by the estimators."""

from ._release import PublicRelease
from ._state import run_transaction
from ._stream import StreamMixin
from ._validation import clip_labels, clip_rows, row_norms_max

__all__ = ["PublicRelease", "StreamMixin", "clip_labels", "clip_rows", "row_norms_max", "run_transaction"]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._docstrings import inject_docstring  # noqa: E402, F401
from ._jit import kernel  # noqa: E402, F401
from ._sparse import (  # noqa: E402, F401
    ACCEPT_SPARSE, as_csr, clip_sparse_rows_in_place, csr_rows, dot, issparse, row_dots,
    row_block, row_ids, row_sq_norms, scale_rows_onto_sparse, sparse_lazy_rows, sparse_unit_rows,
    stack_rows,
    tdot, tmatmul, zero_rows_like,
)
from ._state import InPlaceArrays, Transaction, copy_generator  # noqa: E402, F401
from ._stream import check_terms, is_seeded, stream_rng  # noqa: E402, F401
from ._validation import clip_rows_in_place, scale_rows_onto  # noqa: E402, F401
from ._warnings import user_stacklevel  # noqa: E402, F401
_internal = (
    'ACCEPT_SPARSE', 'InPlaceArrays', 'StreamMixin', 'Transaction', 'as_csr', 'check_terms', 'clip_labels',
    'copy_generator',
    'clip_rows', 'clip_rows_in_place', 'clip_sparse_rows_in_place', 'csr_rows', 'dot',
    'inject_docstring', 'is_seeded', 'kernel', 'issparse', 'row_block', 'row_dots', 'row_ids',
    'row_sq_norms',
    'scale_rows_onto', 'scale_rows_onto_sparse', 'sparse_lazy_rows', 'sparse_unit_rows', 'stack_rows', 'stream_rng',
    'tdot', 'tmatmul', 'user_stacklevel', 'zero_rows_like'
)
