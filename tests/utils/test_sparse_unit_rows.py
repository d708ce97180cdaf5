"""SparseUnitRows (skdpol.utils._sparse): a wide sparse stream's rows
without the appended constant column. Every product must equal, bit for
bit, the same product on sparse_unit_rows' CSR matrix (the column
appended), whatever the rows, the slice and the path (scipy's kernels
called directly, or the csr_matrix fallback)."""

import numpy as np
import pytest
import scipy.sparse as sp

import skdpol.utils._sparse as sparse_mod
from skdpol.utils._sparse import SparseUnitRows, sparse_lazy_rows, sparse_unit_rows, stack_rows


def _csr(n, d, density, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = rng.normal(size=X.data.size) * 3.0  # some rows above norm 1: clipped
    if n > 3:
        X = sp.csr_matrix(X.toarray() * (np.arange(n) % 4 != 1)[:, None])  # empty rows
    X.sort_indices()
    return X


def _bytes(a):
    return np.ascontiguousarray(a).tobytes()


CASES = [(50, 7, 0.3), (1, 3, 0.0), (20, 5, 0.0), (100, 40, 0.05), (30, 2**17, 1e-4),
         (64, 300, 0.1)]


@pytest.mark.parametrize("direct", [True, False])
@pytest.mark.parametrize("const", [1.0, None])
@pytest.mark.parametrize("n, d, density", CASES)
def test_products_equal_the_appended_matrix(n, d, density, const, direct, monkeypatch):
    if not direct:  # the fallback: the same kernels behind scipy's csr_matrix
        monkeypatch.setattr(sparse_mod, "csr_matvec", None)
    X = _csr(n, d, density)
    full = sparse_unit_rows(X, 0.7, const)  # the matrix the rounds took before
    lazy = sparse_lazy_rows(X, 0.7, const)
    rng = np.random.default_rng(1)
    width = d + (const is not None)
    assert lazy.shape == full.shape == (n, width)
    for lo, hi in [(0, n), (0, n // 2), (n // 3, n), (n // 4, n // 4 + 5), (n, n)]:
        rows, block = lazy[lo:hi], full[lo:hi]
        m = block.shape[0]
        assert rows.shape == block.shape
        w = rng.normal(size=width)
        r = rng.normal(size=m)
        W = rng.normal(size=(width, 3))
        R = rng.normal(size=(3, m))
        assert _bytes(rows.matvec(w)) == _bytes(block @ w)
        assert _bytes(rows.rmatvec(r)) == _bytes(block.T @ r)
        assert _bytes(rows.matmul(W)) == _bytes(block @ W)
        assert _bytes(rows.rmatmul(R)) == _bytes(np.asarray(block.T @ R.T).T)
        got = rows.tocsr()
        for part in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(got, part), getattr(block, part))


def test_signed_zero_of_the_constant_column():
    # an all-zero sum keeps scipy's sign (+0: its sum starts from 0.0)
    X = _csr(6, 5, 0.5)
    lazy, full = sparse_lazy_rows(X, 1.0, 1.0), sparse_unit_rows(X, 1.0, 1.0)
    r = np.full(6, -0.0)
    assert _bytes(lazy.rmatvec(r)) == _bytes(full.T @ r)
    assert np.signbit(lazy.rmatvec(r)[-1]) == np.signbit((full.T @ r)[-1])


def test_stack_rows_makes_them_csr_never_dense():
    X = _csr(40, 2**17, 1e-4)
    lazy, full = sparse_lazy_rows(X, 1.0, 1.0), sparse_unit_rows(X, 1.0, 1.0)
    got = stack_rows([np.empty((0, 2**17 + 1)), lazy[30:]])
    assert sp.issparse(got) and got.shape == (10, 2**17 + 1)
    assert (got != full[30:]).nnz == 0
    both = stack_rows([got, lazy[:5]])
    assert sp.issparse(both) and (both != sp.vstack([full[30:], full[:5]])).nnz == 0
    empty = stack_rows([np.empty((0, 2**17 + 1)), lazy[40:]])
    assert sp.issparse(empty) and empty.shape == (0, 2**17 + 1)


def test_only_contiguous_slices():
    lazy = sparse_lazy_rows(_csr(10, 4, 0.5), 1.0, 1.0)
    with pytest.raises(TypeError, match="contiguous row slices"):
        lazy[::2]
    with pytest.raises(TypeError, match="contiguous row slices"):
        lazy[3]
    assert isinstance(lazy[2:5], SparseUnitRows) and lazy[2:5].shape == (3, 5)
    assert lazy[8:3].shape == (0, 5)


@pytest.mark.parametrize("n, d, density", CASES[:4])
def test_last_weights_replace_the_constant_columns(n, d, density):
    X = _csr(n, d, density)
    lazy, full = sparse_lazy_rows(X, 0.7, 1.0), sparse_unit_rows(X, 0.7, 1.0)
    rng = np.random.default_rng(2)
    w, W = rng.normal(size=d + 1), rng.normal(size=(d + 1, 2))
    last, lasts = rng.normal(), rng.normal(size=2)
    w2, W2 = w.copy(), W.copy()
    w2[-1], W2[-1] = last, lasts
    assert _bytes(lazy.matvec(w, last=last)) == _bytes(full @ w2)
    assert _bytes(lazy.matmul(W, last=lasts)) == _bytes(full @ W2)
