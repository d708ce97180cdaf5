"""CSR helpers of the wide streams' hot path (skdpol.utils._sparse): the
constant column appended in place of an hstack, and row blocks from slices.
Both must give exactly the matrices scipy's own operations give."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol.utils._sparse import (row_block, scale_rows, sparse_unit_rows, unit_factors,
                                  with_column)


def _csr(n, d, density, seed=0):
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    if n > 3:
        X = sp.csr_matrix(X.toarray() * (np.arange(n) % 4 != 1)[:, None])  # empty rows
    X.sort_indices()
    return X


@pytest.mark.parametrize("n, d, density", [(50, 7, 0.3), (1, 3, 0.0), (20, 5, 0.0),
                                           (100, 40, 0.05), (0, 4, 0.1), (30, 2**17, 1e-4)])
def test_with_column_is_hstack(n, d, density):
    X = _csr(n, d, density)
    got = with_column(X, 0.5)
    col = sp.csr_matrix(np.full((n, 1), 0.5))
    want = sp.hstack([X, col], format="csr")
    want.sort_indices()
    assert got.shape == (n, d + 1)
    for part in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(got, part), getattr(want, part))
    assert got.has_canonical_format


def _parts(M):
    return [getattr(M, part) for part in ("indptr", "indices", "data")]


def _assert_same_bytes(got, want):
    assert got.shape == want.shape
    for a, b in zip(_parts(got), _parts(want)):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("n, d, density", [(50, 7, 0.3), (1, 3, 0.0), (0, 4, 0.1),
                                           (100, 40, 0.05), (30, 2**17, 1e-4)])
def test_with_column_takes_any_index_type_and_data(n, d, density, index_type):
    X = _csr(n, d, density)
    X.indices = X.indices.astype(index_type)
    X.indptr = X.indptr.astype(index_type)
    data = X.data * -1.5
    data[:1] = -0.0  # signed zeros kept
    got = with_column(X, 0.5)
    np.testing.assert_array_equal(got.toarray()[:, :d], X.toarray())
    assert (got.toarray()[:, d] == 0.5).all() and got.has_sorted_indices == X.has_sorted_indices
    # data= stores those values in X's layout: X with its data replaced
    Y = X.copy()
    Y.data = data
    _assert_same_bytes(with_column(X, 1.0, data), with_column(Y, 1.0))


@pytest.mark.parametrize("const", [None, 1.0, 0.5])
def test_sparse_unit_rows_is_scale_rows_then_with_column(const):
    # the fused path (no scale_rows copy) gives scale_rows' products
    X = _csr(80, 300, 0.05) * 7.0  # rows above the unit ball are clipped
    X.data[3] = 1e300  # a square that overflows: clipped along its direction
    factor, Xc = unit_factors(X, 0.3)
    want = scale_rows(Xc, factor)
    if const is not None:
        want = with_column(want, const)
    got = sparse_unit_rows(X, 0.3, const)
    _assert_same_bytes(got, want)
    assert not np.shares_memory(got.data, X.data)
    assert not np.shares_memory(got.indices, X.indices)


def test_row_block_is_the_slice():
    X = _csr(60, 9, 0.4)
    for lo, hi in [(0, 60), (0, 1), (7, 23), (59, 60), (10, 10)]:
        block, want = row_block(X, lo, hi), X[lo:hi]
        assert sp.issparse(block) and block.shape == want.shape
        np.testing.assert_array_equal(block.toarray(), want.toarray())
        for part in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(block, part), getattr(want, part))
        assert block.has_sorted_indices
    dense = X.toarray()
    assert row_block(dense, 3, 8).base is dense  # arrays: numpy's view
