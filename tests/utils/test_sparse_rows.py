"""CSR helpers of the wide streams' hot path (skdpol.utils._sparse): the
constant column appended in place of an hstack, and row blocks from slices.
Both must give exactly the matrices scipy's own operations give."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol.utils._sparse import row_block, with_column


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
