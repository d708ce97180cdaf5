"""``fit`` on a Dask collection: noisy gradient descent with the gradient sums taken per block.

Why. ``fit``'s default model (``algorithm="auto"`` -> ``"noisy-gd"``,
:mod:`skdpol.online._noisy_gd`) touches the rows only through one gradient
sum per step, ``sum_i l'(W v_i, y_i) v_i^T``. A sum splits over row blocks,
so a table larger than the client's memory can stay where Dask keeps it: each
block is validated and mapped into unit space once, on its worker, and kept
there; every step sends the current (public) model to the workers, each
returns its block's exact partial sum, and the client adds the partial sums
in block order and then the step's noise, once. Nothing else changes: the
schedule (K steps, step size), the noise calibration and the accounting are
built by the same :func:`skdpol.online._factory._noisy_gd` from the same
public quantities (n, d, the bounds, epsilon, delta), and the noise is drawn
from the same generator in the same order, so the release is the in-memory
``fit``'s up to how the floating-point sums are ordered.

Privacy. The released quantity of a step is the same function of the rows
(the full sum; a reordering of its terms), so its replace-one sensitivity is
the in-memory one, 2 L R (:attr:`NoisyGradientDescent.sensitivity`), and so
is the cost: K adaptively composed Gaussian steps, one release
(``privacy_spent_`` and the ledger entry are those of the in-memory
``fit``). The partial sums the workers return are *exact*: the cluster is
the curator (one administrative domain that holds the rows anyway), as for
the estimators' other Dask use (``docs/distributed.md``). What leaves the
client is the model published after each noisy step, which is
post-processing of the releases.

Bounds and labels. ``data_norm`` (and the regressor's ``y_bound``) must be
given: the in-memory ``fit`` reads a missing bound off the rows with a
:class:`~skdpol.PrivacyLeakWarning`, a leak we refuse to extend to data that
is too large to look at (fail-closed). The row count is public under
replace-one neighbours (a dask DataFrame's partition lengths are computed for
it). The classifier's label set keeps the in-memory semantics: ``classes``
states it publicly; ``classes=None`` reads it off ``y`` (computed on the
cluster) with the same warning, and ``privacy_spent_.inferred`` says so.

Floating point. The in-memory step takes the gradient sum in one BLAS call
over all n rows; here each block's sum is one BLAS call over its rows and
the blocks' sums are added in block order (fixed, so a run is deterministic
whatever the scheduling). The two differ by float reordering only: at most
about n u sum_i ||g_i|| (u = 2^-53), in practice ~1e-13 relative. With the
default ``noise_sampler="discrete"`` the noisy sum is rounded to a grid of
step h ~ 2 L R / (1024 sqrt(k d)) before the integer noise is added, so the
release is bit for bit the in-memory one unless a coordinate's exact sum
falls within that error of a grid midpoint (measured: identical on every
test and on the benchmark's 1,000,000 rows; see
``tests/linear_model/test_dask_fit.py``). With ``noise_sampler="float"``
the models agree to ~1e-12 relative.
"""

import math
import sys

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_feature_names

from ..online import _noisy_gd
from ..online import NoisyGradientDescent
from ..online import ALGORITHMS, CLASSIFIER
from ._units import UnitSpace


def is_dask(obj):
    """Whether ``obj`` is a Dask collection (dask is never imported for it:
    if nothing imported dask, nothing can be one)."""
    dask = sys.modules.get("dask")
    return dask is not None and dask.is_dask_collection(obj)


def _active_client():
    """The ``dask.distributed`` client in use, or None (then the blocks are
    computed and kept in this process)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


# ---------------------------------------------------------------- input
def dask_input(X, y):
    """(X as a dask array of whole-row blocks, y as a dask array with the same
    row blocks, X's empty pandas frame or None): shapes checked, nothing read
    but a DataFrame's partition lengths (row counts are public)."""
    import dask.array as da
    import dask.dataframe as dd

    meta = None
    if isinstance(X, dd.DataFrame):
        meta = X._meta
        X = X.to_dask_array(lengths=True)
    elif not isinstance(X, da.Array):
        raise TypeError(f"with a dask y, X must be a dask array or dask DataFrame, got "
                        f"{type(X).__name__}.")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got a dask array of {X.ndim} dimensions.")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes (row counts per block): call "
                         "X.compute_chunk_sizes() first (row counts are public).")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must hold numbers, got dtype {X.dtype}.")
    X = X.rechunk({1: -1})  # whole rows per block
    if isinstance(y, dd.DataFrame):
        if len(y.columns) != 1:
            raise ValueError(f"y must be 1-dimensional, got a DataFrame of {len(y.columns)} "
                             "columns.")
        y = y[y.columns[0]]
    if isinstance(y, dd.Series):
        y = y.to_dask_array(lengths=True)
    elif not isinstance(y, da.Array):
        y = np.asarray(y)
        if y.ndim == 1 and y.shape[0] == X.shape[0]:
            y = da.from_array(y, chunks=(X.chunks[0],))
        else:
            y = da.from_array(y)  # its shape is refused below
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got {y.ndim} dimensions.")
    if any(math.isnan(c) for c in y.chunks[0]):
        raise ValueError("y has unknown chunk sizes: call y.compute_chunk_sizes() first.")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}.")
    if X.shape[0] < 1:
        raise ValueError("Found array with 0 sample(s); at least 1 is required.")
    return X, y.rechunk((X.chunks[0],)), meta


def _label_set(y):
    """The labels' set, computed block by block (a leak the caller flags)."""
    import dask
    from dask import delayed

    parts = dask.compute(*[delayed(np.unique)(b) for b in y.to_delayed().ravel()])
    return np.unique(np.concatenate(parts))


# ---------------------------------------------------------------- on the workers
def _prepare_block(X, y, offset, units, classes):
    """One block's (unit rows, unit labels), as the in-memory ``fit`` maps
    them (:meth:`UnitSpace.rows`, :meth:`UnitSpace.labels` or the
    classifier's encoding). Bad rows raise, named by their index in the whole
    input (``offset``: the block's first row)."""
    with np.errstate(all="ignore"):
        X = np.asarray(X, dtype=np.float64)
        bad = ~np.isfinite(X).all(axis=1)
        if bad.any():
            rows = np.flatnonzero(bad) + offset
            raise ValueError(f"Input X contains NaN or infinity in {rows.size} row(s) "
                             f"(first rows {rows[:5].tolist()}).")
        y = np.asarray(y)
        if classes is None:  # the regressor: numeric, finite labels
            if y.dtype.kind not in "biuf":
                raise ValueError(f"y must hold numbers, got dtype {y.dtype}.")
            y = y.astype(np.float64)
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            rows = np.flatnonzero(~np.isfinite(y)) + offset
            raise ValueError(f"Input y contains NaN or infinity in {rows.size} row(s) "
                             f"(first rows {rows[:5].tolist()}).")
        if classes is None:
            return units.rows(X), units.labels(y)
        from ._logistic import encode_labels

        check_classification_targets(y)
        return units.rows(X), encode_labels(classes, y, offset)


def _block_rows(block):
    return block[0].shape[0]


def _block_gradient(block, loss, W):
    """One block's exact gradient sum at W: the in-memory step's call
    (``NoisyGradientDescent._gradient_sum``) on the block's rows."""
    with np.errstate(all="ignore"):
        return loss.gradient(W, block[0], block[1])


class ClusterBlocks:
    """The prepared blocks, kept where they were computed (on the workers
    with a ``dask.distributed`` client, else in this process); every block
    is validated before this returns. ``shape`` is the unit rows' (public)."""

    def __init__(self, X, y, units, classes):
        from dask import delayed

        offsets = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)
        parts = [delayed(_prepare_block, pure=False)(xb, yb, int(o), units, classes)
                 for xb, yb, o in zip(X.to_delayed().ravel(), y.to_delayed().ravel(), offsets)]
        self.shape = (X.shape[0], X.shape[1] + (units.intercept is not None))
        self.client = _active_client()
        if self.client is not None:
            self._blocks = self.client.compute(parts)  # futures: the blocks stay there
            try:  # the first bad block's error, raised here before any step
                sizes = self.client.gather(self.client.map(_block_rows, self._blocks,
                                                           pure=False))
            except BaseException:
                self.close()
                raise
        else:
            import dask

            self._blocks = list(dask.compute(*parts))
            sizes = [_block_rows(b) for b in self._blocks]
        if sum(sizes) != X.shape[0]:  # a block whose length differs from its chunk
            self.close()
            raise ValueError(f"X's blocks hold {sum(sizes)} rows, not the {X.shape[0]} "
                             "their chunk sizes state.")

    def gradient_sum(self, loss, W):
        """sum over every row of the loss's gradient at W, shape (k, d):
        the blocks' exact sums, added here in block order."""
        if self.client is not None:
            parts = self.client.gather(
                self.client.map(_block_gradient, self._blocks, loss=loss, W=W, pure=False))
        else:
            parts = [_block_gradient(b, loss, W) for b in self._blocks]
        total = np.array(parts[0], dtype=np.float64)
        for part in parts[1:]:
            total += part
        return total

    def close(self):
        if self.client is not None and self._blocks:
            self.client.cancel(self._blocks)
        self._blocks = []


class ClusterGradientDescent(NoisyGradientDescent):
    """:class:`NoisyGradientDescent` whose round reads a :class:`ClusterBlocks`
    (its ``X``) through :meth:`ClusterBlocks.gradient_sum`; the steps, the
    noise and the accounting are the parent's."""

    def _gradient_sum(self, W, X, y):
        return X.gradient_sum(self.loss, W)

    def learn_blocks(self, blocks):
        """fit's single round over every row (as ``RoundBuffer.learn``)."""
        self.check_room(blocks.shape[0])
        self._round(blocks, None)
        self.n_rounds += 1
        self._publish()


# ---------------------------------------------------------------- the estimator side
def _check_supported(est, algorithm):
    if ALGORITHMS[algorithm].family != "noisy-gd":
        raise ValueError(
            f"fit on dask input runs noisy gradient descent only (algorithm='noisy-gd', "
            f"which 'auto' resolves to when delta > 0), not algorithm={algorithm!r}.")
    missing = [name for name in ("data_norm", "y_bound")
               if name in est.get_params() and getattr(est, name) is None]
    if missing:
        raise ValueError(
            f"{' and '.join(missing)} must be given for dask input: reading a bound off "
            "the rows leaks it (the in-memory fit does so only with a PrivacyLeakWarning). "
            f"Pass {missing[0]}=... from the data's documentation.")


def _units(est, classifier):
    return UnitSpace(float(est.data_norm), None if classifier else float(est.y_bound),
                     est.fit_intercept)


def _gd_params(est, units, loss, n_columns, n_rows):
    params = est._algorithm_params(units, loss, n_columns, n_rows, False)
    for unused in ("radius", "calibration", "feedback", "intercept"):  # as make_stream for noisy-gd
        params.pop(unused)
    return params


def fit_dask(est, X, y, classes=None):
    """``est._fit`` for dask input (inside the estimator's transaction)."""
    classifier = est._kind == CLASSIFIER
    est._check_algorithm(stream=False)
    algorithm = est._algorithm_for(stream=False)
    _check_supported(est, algorithm)
    X, y, meta = dask_input(X, y)
    n, d = X.shape
    _check_feature_names(est, meta if meta is not None else np.empty((0, d)), reset=True)
    est.n_features_in_ = d
    if classifier:
        est.__dict__.pop("classes_", None)
    stream = est._begin_one_release(n)
    if classifier:
        est._set_classes(classes, _label_set(y) if classes is None else None)
        est._classes_inferred = "classes" in est._inferred
    units = stream.units = _units(est, classifier)
    est.algorithm_ = algorithm
    loss = est._loss(algorithm)
    blocks = ClusterBlocks(X, y, units, est.classes_ if classifier else None)
    try:  # every block is valid: from here on, the steps
        gd = _noisy_gd(**_gd_params(est, units, loss, blocks.shape[1], n), horizon=1,
                       rng=est._rng, cls=ClusterGradientDescent)
        gd.learn_blocks(blocks)
    finally:
        blocks.close()
    stream.algorithm = gd
    est._record_one_release(stream, n, gd.published.copy(), gd.event())


def declared_fit_event(est, X, y, classes=None):
    """The event ``fit_dask`` will record, from public quantities (n, d, the
    parameters, the number of classes): the ledger's budget check, with no
    row read nor built in memory. ``classes=None`` reads the label
    set, as the fit itself will (flagged there)."""
    classifier = est._kind == CLASSIFIER
    algorithm = est._algorithm_for(stream=False)
    _check_supported(est, algorithm)
    X, y, _ = dask_input(X, y)
    n, d = X.shape
    if classifier:
        from ..losses import LogisticLoss, MultinomialLoss

        k = np.unique(np.asarray(classes)).size if classes is not None else _label_set(y).size
        loss = LogisticLoss() if k == 2 else MultinomialLoss(k)
    else:
        loss = est._loss(algorithm)
    units = _units(est, classifier)
    gd = _noisy_gd(**_gd_params(est, units, loss, d + est.fit_intercept, n), horizon=1,
                   rng=None)
    return gd.event(1)
