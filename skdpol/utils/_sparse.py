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

from ._sparse_kernels import scaled_values

try:  # scipy's CSR kernels, what ``X @ w`` and ``X.T @ r`` run (``SparseUnitRows``)
    from scipy.sparse._sparsetools import csc_matvec, csc_matvecs, csr_matvec, csr_matvecs
except ImportError:  # a scipy that moved them: the same products through csr_matrix
    csr_matvec = None


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
    round's dense empty buffer does not densify it; :class:`SparseUnitRows`
    made CSR, never dense)."""
    parts = [p.tocsr() if isinstance(p, SparseUnitRows) else p for p in parts]
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


def sparse_lazy_rows(X, scale, const):
    """:func:`sparse_unit_rows` without the appended column's copy of the
    chunk: a :class:`SparseUnitRows` over the same scaled values."""
    factor, X = unit_factors(X, scale)
    data = scaled_values(X.data, X.indptr, factor)  # X.data[k] * factor[row]: one pass
    return SparseUnitRows(data, X.indices, X.indptr, 0, X.shape[0], X.shape[1], const)


class SparseUnitRows:
    """The CSR unit rows [f_i x_i, c] of :func:`sparse_unit_rows`, rows
    ``lo:hi`` of a chunk, with the constant column ``const`` kept aside
    (None: none) instead of appended to the arrays.

    Why. A round of a wide sparse stream takes two products with its rows,
    margins and a gradient sum. :func:`sparse_unit_rows` wrote the constant
    column into a new CSR matrix (``np.insert`` of every value and index:
    0.8 of its 1.3 ms on a chunk of 10,000 rows of 30 nonzeros), and each
    round then built a CSR block and its transpose through scipy's checked
    constructors (~0.1-0.2 ms a round). Here the chunk's scaled values are
    computed once (the same products ``f_i x_ij``), a row slice only moves
    ``lo:hi`` (no copy, no check), and the products call scipy's CSR kernels
    (``csr_matvec`` / ``csc_matvec``: what ``X @ w`` and ``X.T @ r`` run) on
    the block's arrays.

    The same numbers, bit for bit. scipy's kernels sum a row's terms (or a
    column's, for ``X.T @ r``) one after the other from 0, in the order of
    the stored entries; the constant column's entry is the last of each row
    (its index d is above every other), so on the appended matrix a margin is
    ``(... + a_i w_i) + 1.0 w_d`` and the gradient's last coordinate is
    ``((0 + 1.0 r_0) + 1.0 r_1) + ...``. Here the first d columns go through
    the same kernel on the same entries in the same order, the margin then
    adds ``const w_d`` (``1.0 w_d`` is ``w_d`` exactly), and the last
    coordinate is ``0.0 + accumulate(const r)[-1]``: ``np.add.accumulate`` is a
    sequential sum, and starting it from the first term instead of from 0
    only changes the sign of an all-zero sum, which the final ``0.0 +``
    restores (x + y with x = +-0 is y when y is not zero, and +0 when both
    are zeros of different signs). A round made of two chunks' rows, or
    rows that wait for the next call, are the CSR matrix with the column
    (:meth:`tocsr`, through :func:`stack_rows`), as before.

    Privacy: the same rows, each the same function of its own row alone
    (:func:`unit_factors`); nothing is published from here.
    """

    __slots__ = ("data", "indices", "indptr", "lo", "hi", "width", "const")

    def __init__(self, data, indices, indptr, lo, hi, width, const):
        self.data, self.indices, self.indptr = data, indices, indptr
        self.lo, self.hi, self.width, self.const = lo, hi, width, const

    @property
    def shape(self):
        return (self.hi - self.lo, self.width + (self.const is not None))

    def __getitem__(self, rows):
        if not isinstance(rows, slice) or rows.step not in (None, 1):
            raise TypeError("SparseUnitRows takes contiguous row slices only.")
        lo, hi, _ = rows.indices(self.hi - self.lo)
        hi = max(hi, lo)
        return SparseUnitRows(self.data, self.indices, self.indptr, self.lo + lo,
                              self.lo + hi, self.width, self.const)

    def _block(self):
        """(values, column indices, row pointers from 0) of the rows lo:hi."""
        start, stop = self.indptr[self.lo], self.indptr[self.hi]
        ptr = self.indptr[self.lo:self.hi + 1]
        return self.data[start:stop], self.indices[start:stop], ptr - start

    def _features(self):
        """The rows without the constant column, as a CSR matrix."""
        data, indices, ptr = self._block()
        return sp.csr_matrix((data, indices, ptr), shape=(self.hi - self.lo, self.width),
                             copy=False)

    def tocsr(self):
        """The rows as a CSR matrix, the constant column appended
        (:func:`sparse_unit_rows`' matrix)."""
        if self.hi == self.lo:  # a call's rows that all went into rounds: nothing waits
            return sp.csr_matrix(self.shape)
        X = self._features()
        return X if self.const is None else with_column(X, self.const)

    def _direct(self, *arrays):
        """Whether scipy's kernels take these arrays as they are (else the
        csr_matrix path: the same kernels behind scipy's checks)."""
        return (csr_matvec is not None and self.indices.dtype == self.indptr.dtype
                and all(a.dtype == np.float64 for a in arrays))

    def _last(self, r):
        """The constant column's coordinate of ``r @ rows``: 0 + the sequential
        sum of const r_i over the rows (axis 0), as scipy's kernel adds it."""
        if r.shape[0] == 0:
            return np.zeros(r.shape[1:])
        return 0.0 + np.add.accumulate(self.const * r, axis=0)[-1]

    takes_last = True  # matvec / matmul take the constant column's weights apart

    def matvec(self, w, last=None):
        """``rows @ w`` for a vector w of length ``shape[1]`` (``last``: the
        constant column's weight in place of ``w[-1]``)."""
        d, n = self.width, self.hi - self.lo
        x = w[:d]
        if self._direct(x) and x.flags.c_contiguous:
            s = np.zeros(n)
            data, indices, ptr = self._block()
            csr_matvec(n, d, ptr, indices, data, x, s)
        else:
            s = np.asarray(self._features() @ x, dtype=np.float64)
        if self.const is not None:
            s += self.const * (w[d] if last is None else last)
        return s

    def rmatvec(self, r):
        """``r @ rows`` for a vector r of length ``shape[0]``."""
        d, n = self.width, self.hi - self.lo
        g = np.zeros(d + (self.const is not None))
        r = np.ascontiguousarray(r, dtype=np.float64)
        if self._direct(r):
            data, indices, ptr = self._block()
            csc_matvec(d, n, ptr, indices, data, r, g[:d])
        else:
            g[:d] = self._features().T @ r
        if self.const is not None:
            g[d] = self._last(r)
        return g

    def matmul(self, W, last=None):
        """``rows @ W`` for W of shape (``shape[1]``, k) (``last``: the
        constant column's weights (k,) in place of ``W[-1]``)."""
        d, n, k = self.width, self.hi - self.lo, W.shape[1]
        x = np.ascontiguousarray(W[:d], dtype=np.float64)
        if self._direct(x):
            S = np.zeros((n, k))
            data, indices, ptr = self._block()
            csr_matvecs(n, d, k, ptr, indices, data, x.ravel(), S.ravel())
        else:
            S = np.asarray(self._features() @ x, dtype=np.float64)
        if self.const is not None:
            S += self.const * (W[d] if last is None else last)
        return S

    def rmatmul(self, R):
        """``R @ rows`` for R of shape (k, ``shape[0]``)."""
        d, n, k = self.width, self.hi - self.lo, R.shape[0]
        D = np.ascontiguousarray(R.T, dtype=np.float64)  # (n, k), as X.T @ D takes it
        G = np.zeros((d + (self.const is not None), k))
        if self._direct(D):
            data, indices, ptr = self._block()
            csc_matvecs(d, n, k, ptr, indices, data, D.ravel(), G[:d].ravel())
        else:
            G[:d] = self._features().T @ D
        if self.const is not None:
            G[d] = self._last(D)
        return G.T
