"""PQFTL's leaves and the clipping helpers on CSR rows: the exact grid is
bit-identical to the dense one (integer sums are exact in any order); the
float leaves agree to their error bound."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol.online._ftl_grid import LeafGrid
from skdpol.utils._sparse import clip_sparse_rows_in_place, sparse_unit_rows
from skdpol.utils._validation import clip_rows_in_place


def _rows(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 6)) * (rng.random((40, 6)) < 0.5)
    X[:5] *= 50.0  # rows to clip
    X[5, :2] = [1e200, -1e200]  # a squared norm that overflows
    return X, rng.normal(size=40) * 3


@pytest.mark.parametrize("intercept", [None, 1.0])
def test_grid_design_and_leaf_are_bit_identical(intercept):
    X, y = _rows()
    grid = LeafGrid(rows_per_leaf=8, row_bound=2.0 ** 0.5 if intercept else 1.0,
                    label_bound=1.0, intercept=intercept)
    dense = grid.design(X, y, row_scale=0.5, label_scale=0.25)
    sparse = grid.design(sp.csr_matrix(X), y, row_scale=0.5, label_scale=0.25)
    assert sp.issparse(sparse)
    np.testing.assert_array_equal(sparse.toarray(), dense)
    np.testing.assert_array_equal(grid.leaf(sparse, 1.0, 1.0), grid.leaf(dense, 1.0, 1.0))
    np.testing.assert_array_equal(grid.row_leaves(sparse[:8], 1.0, 1.0),
                                  grid.row_leaves(dense[:8], 1.0, 1.0))


def test_sparse_clipping_matches_dense():
    X, _ = _rows()
    dense = clip_rows_in_place(X * 0.5, 1.0, raw=X)
    Xs = sp.csr_matrix(X)
    Us = Xs.copy()
    Us.data = Us.data * 0.5
    np.testing.assert_allclose(clip_sparse_rows_in_place(Us, 1.0, raw=Xs).toarray(), dense,
                               rtol=1e-15, atol=1e-15)
    U = sparse_unit_rows(Xs, 0.5, 1.0)
    assert U.shape == (40, 7)
    np.testing.assert_allclose(U.toarray()[:, :6], dense, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(U.toarray()[:, 6], 1.0)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_sparse_clipping_raises_on_non_finite(bad):
    Xs = sp.csr_matrix(_rows()[0])
    Xs.data[0] = bad
    with pytest.raises(ValueError, match="Input X contains"):
        sparse_unit_rows(Xs, 1.0, None)
    with pytest.raises(ValueError, match="Input X contains"):
        clip_sparse_rows_in_place(Xs.copy(), 1.0)
