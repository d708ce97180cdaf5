"""The compiled CSR pass gives numpy's bits (skdpol/utils/_sparse_kernels.py)."""

import numpy as np
import scipy.sparse as sp

from skdpol.utils import sparse_lazy_rows
from skdpol.utils._sparse_kernels import scaled_values


def test_scaled_values_match_numpy_bit_for_bit():
    rng = np.random.default_rng(1)
    for index in (np.int32, np.int64):
        X = sp.random(1_000, 5_000, density=0.01, format="csr", random_state=1)
        X.indptr, X.indices = X.indptr.astype(index), X.indices.astype(index)
        X.data *= rng.normal(size=X.data.size) * np.exp(rng.normal(size=X.data.size) * 5)
        X.data[:3] = [np.nan, np.inf, -0.0]
        factor = rng.random(1_000)
        factor[0] = 0.0  # nan * 0, inf * 0: NaN in both
        with np.errstate(invalid="ignore"):
            want = X.data * np.repeat(factor, np.diff(X.indptr))
        assert scaled_values(X.data, X.indptr, factor).tobytes() == want.tobytes()


def test_trailing_storage_is_not_read():
    # CSR data may be longer than indptr[-1]: only the rows' values are scaled
    data, indptr = np.array([1.0, 2.0, 99.0]), np.array([0, 1, 2])
    assert np.array_equal(scaled_values(data, indptr, np.array([3.0, 0.5])), [3.0, 1.0])


def test_lazy_rows_are_the_clipped_rows():
    X = sp.random(500, 2_000, density=0.02, format="csr", random_state=2)
    X.data *= 5.0
    rows = sparse_lazy_rows(X, 0.7, 1.0).tocsr()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    factor = np.where(norms * 0.7 > 1.0, 1.0 / np.maximum(norms, 1e-300), 0.7)
    assert np.allclose(rows[:, :2_000].toarray(), (sp.diags(factor) @ X).toarray())
    assert np.array_equal(rows[:, 2_000].toarray().ravel(), np.ones(500))
