"""The parties' rows: numpy rows split by ``parties``, or dask blocks, and the
bounds every party reports (MultiPartyPrivateSGD's inputs)."""

import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..exceptions import PrivacyLeakWarning
from ..utils import ACCEPT_SPARSE, csr_rows
from ..utils import user_stacklevel
from ._parties import DaskParties, LocalParties


def _is_dask(obj):
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr")


def _active_client():
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:  # no client: run in this process
        return None


def _dask_parts(X, y):
    """(row blocks of X, of y, feature names): one party per block / partition."""
    import dask.array as da
    import dask.dataframe as dd

    names = None
    if isinstance(X, dd.DataFrame):
        names = np.asarray([str(c) for c in X.columns], dtype=object)
        x_parts = list(X.to_delayed())
    elif isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got a dask array of {X.ndim} dimensions.")
        X = X.rechunk({1: -1})
        x_parts = list(X.to_delayed().ravel())
    else:
        raise TypeError(f"X must be a dask array or dataframe, got {type(X).__name__}.")
    if isinstance(y, (dd.Series, dd.DataFrame)):
        y_parts = list(y.to_delayed())
    elif isinstance(y, da.Array):
        if isinstance(X, da.Array) and y.ndim == 1 and y.shape[0] == X.shape[0]:
            y = y.rechunk((X.chunks[0],))
        y_parts = list(y.to_delayed().ravel())
    else:
        raise TypeError(f"with a dask X, y must be a dask array or series, got "
                        f"{type(y).__name__}.")
    if len(x_parts) != len(y_parts):
        raise ValueError(f"X has {len(x_parts)} row blocks (parties) but y has "
                         f"{len(y_parts)}: give y the same partitions.")
    return x_parts, y_parts, names


class PartyInputsMixin:
    """The parties of a fit and their reports (:class:`MultiPartyPrivateSGD`)."""

    def _numpy_runner(self, X, y, parties, classifier):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=not classifier,
                             accept_sparse=ACCEPT_SPARSE)
        X = csr_rows(X)  # sparse rows stay CSR on every party
        if classifier:
            check_classification_targets(y)
        if parties is None:
            return LocalParties([(X, y)])
        parties = np.asarray(parties).ravel()
        if parties.shape[0] != X.shape[0]:
            raise ValueError(f"parties has {parties.shape[0]} labels but X has "
                             f"{X.shape[0]} rows.")
        labels, owner = np.unique(parties, return_inverse=True)
        return LocalParties([(X[owner == i], y[owner == i]) for i in range(labels.size)])

    def _dask_runner(self, X, y):
        x_parts, y_parts, names = _dask_parts(X, y)
        client = _active_client()
        if client is not None:
            return DaskParties(client, x_parts, y_parts), names
        import dask

        blocks = dask.compute(*x_parts, *y_parts)
        k = len(x_parts)
        return LocalParties([(np.asarray(blocks[i], dtype=np.float64),
                              np.asarray(blocks[k + i]).ravel()) for i in range(k)]), names

    # ----------------------------------------------------------- bounds
    def _summaries(self, runner, classes, classifier):
        """Validate every block where it lives; read the bounds left None (leaks)."""
        want_norm = self.data_norm is None
        want_y = not classifier and self.y_bound is None
        want_classes = classifier and classes is None
        out = runner.summaries(want_norm=want_norm, want_y=want_y, want_classes=want_classes)
        features = {s["n_features"] for s in out if s["n_rows"] > 0}
        if len(features) > 1 or -1 in features:
            raise ValueError("every party's X must be 2-dimensional with the same features.")
        if any(s["n_rows"] != s["n_labels"] for s in out):
            raise ValueError("a party's y has a different number of rows than its X.")
        if not all(s["finite"] for s in out):
            raise ValueError("Input X or y contains NaN or infinity.")
        n_rows = sum(s["n_rows"] for s in out)
        if n_rows < 1:
            raise ValueError("Found array with 0 sample(s); at least 1 is required.")
        n_features = features.pop() if features else 0
        self.n_features_in_ = n_features
        return out, n_rows

    def _bounds(self, summaries, classes, classifier):
        def leak(name):
            warnings.warn(
                f"{name} is None: it was read off the data (a statistic every party "
                f"sends in the clear), which leaks it and voids the guarantee for it. "
                f"Pass {name}.", PrivacyLeakWarning, stacklevel=user_stacklevel())
            inferred.append(name)

        inferred = []
        data_norm = self.data_norm
        if data_norm is None:
            leak("data_norm")
            data_norm = max((s.get("max_norm", 0.0) for s in summaries), default=0.0) or 1.0
        y_bound = 1.0
        if not classifier:
            y_bound = self.y_bound
            if y_bound is None:
                leak("y_bound")
                y_bound = max((s.get("max_y", 0.0) for s in summaries), default=0.0) or 1.0
        labels = None
        if classifier:
            if classes is None:
                leak("classes")
                classes = np.unique(np.concatenate([s["labels"] for s in summaries]))
            labels = np.unique(np.asarray(classes))
            if labels.size < 2:
                raise ValueError(f"log_loss needs at least 2 classes; got {labels.size} class.")
        return float(data_norm), float(y_bound), labels, tuple(inferred)
