"""Sparse rows (``scipy.sparse`` CSR) on the estimators' hot paths, never densified.

Why. One-hot and hashed features are sparse: a chunk of 10,000 rows of 2^17
hashed columns holds 300,000 nonzeros (a few MB) but would need 10 GB dense.
Everything a round needs from its rows is a product (``X @ w``,
``X.T @ r``), a per-row norm or a per-row scaling, and all of these work on
the nonzeros of a CSR matrix in O(nnz). The estimators accept CSR and CSC
(:data:`ACCEPT_SPARSE`; CSC is turned into CSR once, an O(nnz) copy, as rows
are what every path slices) and these helpers are the only place where the
sparse layout is read.

Privacy. A sparse row is the same vector as its dense copy; every per-row
function below (norm, clipping factor, scaled row) is a function of that row
alone, as on the dense path, so the replace-one sensitivities derived for
dense rows hold unchanged. Products on the nonzeros add the same products as
the dense ones minus exact zeros, in another order: where a derivation
bounds float error (PQFTL's float leaves, :mod:`skdpol.online._ftl_float`)
it already holds for any order of summation, and the exact grid
(:mod:`skdpol.online._ftl_grid`) sums integers, exact in any order.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import assert_all_finite


# what the estimators' validate_data accepts (other formats are converted to CSR)
ACCEPT_SPARSE = ("csr", "csc")


def issparse(X):
    """Is ``X`` a ``scipy.sparse`` matrix or array?"""
    return sp.issparse(X)


def as_csr(X):
    """``X`` as canonical float64 CSR (CSC and the other formats converted,
    duplicate entries summed so that a row's nonzeros are its entries): a
    copy only when ``X`` is not so already."""
    if X.format != "csr" or X.dtype != np.float64:
        X = X.tocsr().astype(np.float64, copy=False)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _segments(values, indptr, ufunc):
    """``ufunc.reduce`` of ``values`` over each row's segment of a CSR
    ``indptr`` (0 for an empty row), in order."""
    n = indptr.size - 1
    out = np.zeros(n)
    starts = indptr[:-1]
    nonempty = starts < indptr[1:]
    if values.size:
        # consecutive nonempty rows' starts delimit exactly their segments
        out[nonempty] = ufunc.reduceat(values, starts[nonempty])
    return out


def row_sq_norms(X):
    """Squared L2 norm of every row of a CSR ``X`` (inf where it overflows,
    NaN where the row holds a NaN)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _segments(X.data * X.data, X.indptr, np.add)


def row_ids(X):
    """The row of every stored entry of a CSR ``X``."""
    return np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))


def scale_rows(X, factor):
    """``diag(factor) @ X`` for a CSR ``X``: a new CSR matrix (O(nnz)), X untouched."""
    out = X.copy()
    out.data *= np.repeat(factor, np.diff(X.indptr))
    return out


def with_column(X, value, data=None):
    """A CSR ``X`` with the constant column ``value`` appended (one more
    stored entry per row); ``data``: the values to store for ``X``'s own
    entries instead of ``X.data`` (the same layout, e.g. its scaled rows).

    The new column's index is above every other, so each row's entry goes at
    the row's end: inserted there directly (``np.insert`` at the rows' ends,
    O(nnz)), the matrix is the one ``sp.hstack`` gives (same entries, same
    order) without its re-sort, which cost more than the rest of a wide
    chunk's unit rows. (Measured on 10,000 rows of 30 nonzeros: 0.6-1.1 ms;
    a scatter through fancy indexing took 3.9-5.7 ms.)"""
    n, d = X.shape
    data = X.data if data is None else data
    nnz = int(X.indptr[-1])
    ends = X.indptr[1:]
    data = np.insert(data[:nnz], ends, float(value))
    indices = np.insert(X.indices[:nnz], ends, d).astype(X.indices.dtype, copy=False)
    indptr = X.indptr + np.arange(n + 1, dtype=X.indptr.dtype)
    out = sp.csr_matrix((data, indices, indptr), shape=(n, d + 1))
    out.has_sorted_indices = X.has_sorted_indices
    return out


def scale_rows_onto_sparse(X, which, radius, shrink=1.0):
    """:func:`~skdpol.utils._validation.scale_rows_onto` on the nonzeros of
    a CSR ``X``, in place: the rows ``which`` (bool, nonzero rows, no NaN)
    scaled onto norm ``radius * shrink`` along their direction without
    overflow (an infinite entry gives the direction alone)."""
    ids = row_ids(X)
    on = which[ids]
    vals = X.data[on]
    rid = ids[on]
    inf = np.isinf(vals)
    rows_with_inf = np.zeros(X.shape[0], dtype=bool)
    rows_with_inf[rid[inf]] = True
    affected = rows_with_inf[rid]
    vals[affected] = np.where(inf[affected], np.sign(vals[affected]), 0.0)
    peak = np.zeros(X.shape[0])
    np.maximum.at(peak, rid, np.abs(vals))
    vals /= peak[rid]
    sq = np.bincount(rid, weights=vals * vals, minlength=X.shape[0])
    factor = np.zeros(X.shape[0])  # only the rows ``which`` (nonzero) are scaled
    factor[which] = radius * shrink / np.sqrt(sq[which])
    vals *= factor[rid]
    X.data[on] = vals
    return X


def clip_sparse_rows_in_place(U, radius, raw=None, shrink=1.0):
    """:func:`~skdpol.utils._validation.clip_rows_in_place` for a CSR ``U``:
    rows of norm above ``radius`` scaled onto ``radius * shrink``, NaN or
    infinity in ``raw`` (default ``U``) raising scikit-learn's error."""
    sq = row_sq_norms(U)
    if not np.isfinite(sq).all():
        assert_all_finite((raw if raw is not None else U).data, input_name="X")
    over = ~(sq <= radius * radius)
    if over.any():
        scale_rows_onto_sparse(U, over, radius, shrink)
    return U


def unit_factors(X, scale):
    """(factor, X): per-row factors that map the rows of a CSR ``X`` to
    ``x * scale`` clipped to norm 1 (``scale``, or ``1 / ||x||`` for a row
    above the bound, as :func:`~skdpol.linear_model._rows.unit_rows`). A row
    whose squared norm overflows takes the clipping of
    :func:`clip_sparse_rows_in_place` in a copy (returned as the new X, factor
    1 there); NaN or infinity raise scikit-learn's error."""
    sq = row_sq_norms(X)
    bad = ~np.isfinite(sq)
    if bad.any():
        assert_all_finite(X.data, input_name="X")  # NaN / inf raise here
        # finite entries whose squares overflow: those rows clipped along
        # their direction in a copy, factor 1
        X = scale_rows_onto_sparse(X.copy(), bad, 1.0)
        sq = np.where(bad, 0.0, sq)
    factor = np.full(X.shape[0], scale)
    with np.errstate(over="ignore"):  # quiet on private rows: an overflow is "over"
        over = sq * (scale * scale) > 1.0
    if over.any():  # clipped onto the unit sphere
        factor[over] = 1.0 / np.sqrt(sq[over])
    factor[bad] = 1.0
    return factor, X


def sparse_unit_rows(X, scale, const):
    """Rows ``x * scale`` clipped to norm 1 as a new CSR matrix (O(nnz)),
    with the constant column ``const`` appended (None: none)."""
    factor, X = unit_factors(X, scale)
    if const is None:
        return scale_rows(X, factor)
    # the scaled values straight into the new matrix (:func:`scale_rows`'
    # products, without its copy of X)
    return with_column(X, const, X.data * np.repeat(factor, np.diff(X.indptr)))


def stack_rows(parts):
    """Rows of ``parts`` one after the other: ``np.concatenate`` for arrays,
    a CSR ``vstack`` when any part is sparse (empty parts dropped, so a
    round's dense empty buffer does not densify it)."""
    if not any(sp.issparse(p) for p in parts):
        return np.concatenate(parts)
    kept = [p for p in parts if p.shape[0]]
    if not kept:
        return next(p for p in parts if sp.issparse(p))
    if len(kept) == 1 and sp.issparse(kept[0]):
        return kept[0]
    return sp.vstack([p if sp.issparse(p) else sp.csr_matrix(p) for p in kept],
                     format="csr")


def row_block(X, lo, hi):
    """Rows ``lo:hi`` of ``X``: ``X[lo:hi]`` (a view for arrays), and for a
    CSR matrix the same block built from its arrays' contiguous slices.

    A round of a wide sparse stream takes its rows this way once per round;
    scipy's general row slice (``get_csr_submatrix``) walks the rows and
    validates them, a quarter of a millisecond for 2,000 rows of 30 nonzeros,
    as much as the round's products; the slices cost a memcpy at most
    (scipy copies a slice much smaller than its parent, ``_prune_array``).
    Nothing writes the block (rounds only take products with their rows),
    and it keeps the parent's sorted-indices flag, which a contiguous block
    of rows inherits."""
    if not (sp.issparse(X) and X.format == "csr"):
        return X[lo:hi]
    start, stop = X.indptr[lo], X.indptr[hi]
    indptr = X.indptr[lo:hi + 1] - start
    out = sp.csr_matrix((X.data[start:stop], X.indices[start:stop], indptr),
                        shape=(hi - lo, X.shape[1]), copy=False)
    out.has_sorted_indices = X.has_sorted_indices
    return out


def zero_rows_like(X, n):
    """``n`` zero rows of ``X``'s width and kind (CSR or array)."""
    if sp.issparse(X):
        return sp.csr_matrix((n, X.shape[1]))
    return np.zeros((n, X.shape[1]))


def dot(X, A):
    """``X @ A`` for rows ``X`` (array: ``np.dot``, the dense paths' call; CSR)."""
    return X @ A if sp.issparse(X) else np.dot(X, A)


def tdot(A, X):
    """``A @ X`` for rows ``X`` and a dense ``A`` (k, n): ``(X.T @ A.T).T`` on CSR."""
    if sp.issparse(X):
        return np.asarray((X.T @ A.T).T)
    return np.dot(A, X)


def csr_rows(X):
    """Validated rows as the paths take them: sparse ones as canonical CSR
    (:func:`as_csr`), arrays unchanged."""
    return as_csr(X) if sp.issparse(X) else X


def tmatmul(A, X):
    """:func:`tdot` with ``A @ X`` (matmul) on arrays, where a path used it."""
    return tdot(A, X) if sp.issparse(X) else A @ X


def row_dots(M, X):
    """Each row of a dense ``M`` (n, d) times the same row of ``X``: the
    einsum ``"ij,ij->i"``, from the nonzeros on CSR rows."""
    if not sp.issparse(X):
        return np.einsum("ij,ij->i", M, X)
    return np.asarray(X.multiply(M).sum(axis=1)).ravel()
