"""Sparse X in the preprocessing: scaled on its nonzeros where zeros stay
zeros, refused with the reason where the map would make it dense."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol.preprocessing import PrivateStandardScaler, PublicRangeScaler


def _X():
    rng = np.random.default_rng(0)
    return rng.normal(scale=3.0, size=(50, 4)) * (rng.random((50, 4)) < 0.4)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_public_range_scaler_symmetric_bounds_keeps_sparse(fmt):
    X = _X()
    bounds = (-np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    Xs = getattr(sp, f"{fmt}_matrix")(X)
    Z = PublicRangeScaler(bounds=bounds).fit(Xs).transform(Xs)
    assert sp.issparse(Z) and Z.nnz <= Xs.nnz
    np.testing.assert_allclose(Z.toarray(), PublicRangeScaler(bounds=bounds).fit_transform(X),
                               rtol=0, atol=1e-15)
    assert PublicRangeScaler(bounds=bounds).__sklearn_tags__().input_tags.sparse


def test_public_range_scaler_refuses_sparse_it_would_densify():
    scaler = PublicRangeScaler(bounds=(0.0, 5.0))
    assert not scaler.__sklearn_tags__().input_tags.sparse
    with pytest.raises(TypeError, match="symmetric about 0"):
        scaler.fit(sp.csr_matrix(_X()))
    assert not hasattr(scaler, "bounds_")


def test_private_standard_scaler_refuses_sparse_with_the_reason():
    scaler = PrivateStandardScaler(bounds=(-5.0, 5.0), random_state=0)
    with pytest.raises(TypeError, match="centres every column"):
        scaler.fit(sp.csr_matrix(_X()))
    assert not hasattr(scaler, "mean_")
    scaler.fit(_X())
    with pytest.raises(TypeError, match="centres every column"):
        scaler.transform(sp.csc_matrix(_X()))
