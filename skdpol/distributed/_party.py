"""What runs where a party's rows live: the only code that touches raw rows.

Every function here takes a party's block (raw rows and labels) plus the
public terms of the protocol and returns *one noisy message* -- a vector the
size of the model -- and nothing else: no row, no exact sum, no generator
state leaves the function. On a Dask cluster these functions run as tasks on
the worker that holds the block, so only their return values travel.

Noise keys. ``key=None`` (``random_state=None``) makes the party draw its
noise from fresh OS entropy *on its own machine*: nobody else, the
coordinator included, can regenerate it. An int key (seeded runs, for tests
and reproduction) is derived by the coordinator, who can then regenerate the
noise: never a deployment (``privacy_spent_.seeded`` says so).
"""

import dataclasses
import functools

import numpy as np

from ..mechanisms import perturb
from ..mechanisms import discrete_noise, quantise
from ..utils import as_csr, issparse, row_sq_norms, sparse_unit_rows
from ..utils import clip_rows_in_place
from ._secagg import pairwise_mask


@dataclasses.dataclass(frozen=True)
class PartyTerms:
    """The public terms a party needs (pickled to the workers; no secret).

    ``classes`` encodes labels for the log loss (None: regression, labels
    divided by ``y_bound`` and clipped to [-1, 1]). ``sensitivity`` is the
    replace-one L2 sensitivity of the party's unit-space gradient sum.
    """

    loss: object
    data_norm: float
    y_bound: float
    classes: object
    fit_intercept: bool
    sensitivity: float
    multiplier: float
    sampler: str
    trust_model: str
    grid_step: float = 0.0  # secure aggregation: the common grid
    share_scale: float = 0.0  # secure aggregation: each share's sigma (grid units)


def unit_block(X, y, terms):
    """Rows in unit space (clipped to norm 1, intercept column 1) and encoded labels.

    Clipping happens here, on the party's machine, before any gradient: the
    sensitivity then holds for any input.
    """
    if issparse(X):  # a party's sparse rows: the same clipping on the nonzeros, kept CSR
        U = sparse_unit_rows(as_csr(X), 1.0 / terms.data_norm,
                             1.0 if terms.fit_intercept else None)
        return U, encode_labels(y, terms)
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    U = np.empty((X.shape[0], d + int(terms.fit_intercept)))
    np.multiply(X, 1.0 / terms.data_norm, out=U[:, :d])
    if terms.fit_intercept:
        U[:, d] = 1.0
    # the estimators' clipping: a row whose scaled norm overflows is clipped
    # along its direction (dividing it by an infinite norm gave NaN rows, and
    # one such row made the whole release NaN); NaN / inf in X raise here
    clip_rows_in_place(U[:, :d], 1.0, raw=X)
    return U, encode_labels(y, terms)


def encode_labels(y, terms):
    y = np.asarray(y).ravel()
    if terms.classes is None:
        return np.clip(y.astype(np.float64) / terms.y_bound, -1.0, 1.0)
    classes = np.asarray(terms.classes)
    index = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
    unknown = classes[index] != y
    if np.any(unknown):  # neither the values nor their count: both are data
        raise ValueError("y has labels that are not in classes.")
    if classes.size == 2:
        return np.where(index == 1, 1.0, -1.0)
    return index.astype(np.float64)


def _quiet(func):
    """Run ``func`` with numpy's floating-point reports off.

    A party's rows are as private as anyone's: an overflow on one extreme
    value would otherwise warn (or raise, under ``np.seterr(all="raise")``)
    on the worker for one neighbour and not the other, and a worker's log
    reaches whoever runs the cluster. Each computation here clips or checks
    what such an operation produces. (A fresh ``np.errstate`` per call: one
    shared instance is not safe across a worker's threads.)
    """
    @functools.wraps(func)
    def quiet(*args, **kwargs):
        with np.errstate(all="ignore"):
            return func(*args, **kwargs)
    return quiet


def _generator(key):
    # None: OS entropy drawn here, on the party's machine
    return np.random.default_rng(None if key is None else np.random.SeedSequence(key))


def gradient_sum(X, y, W, terms):
    """The exact unit-space gradient sum of a block (never returned by a task)."""
    U, yu = unit_block(X, y, terms)
    if U.shape[0] == 0:
        return np.zeros(W.size)
    return terms.loss.gradient(W, U, yu).ravel()


@_quiet
def sgd2_message(X, y, W, terms, key, mask_keys=None, party=0):
    """SGD2: this party's gradient sum at W, with its noise (and masks).

    ``trust_model="local"``: the sum plus the full Gaussian noise of
    ``multiplier`` x ``sensitivity`` (continuous or discrete), a float vector.
    ``"secure-aggregation"``: the sum on the common grid plus one *share* of
    discrete Gaussian noise (integers), plus the pairwise masks, as uint64:
    uniformly random on its own; only the sum of all parties' messages
    (mod 2^64) means anything.
    """
    G = gradient_sum(X, y, W, terms)
    rng = _generator(key)
    if terms.trust_model == "local":
        return perturb(G, sensitivity=terms.sensitivity, multiplier=terms.multiplier,
                       noise="gaussian", sampler=terms.sampler, rng=rng)
    q = quantise(G, terms.grid_step).astype(np.int64)
    q += discrete_noise(rng, q.size, terms.share_scale, "gaussian").astype(np.int64)
    return q.view(np.uint64) + pairwise_mask(mask_keys, party, q.size)


@_quiet
def sgd1_message(X, y, row, W, n_rows, terms, key):
    """SGD1: n times the gradient of one row of this party at W, plus noise."""
    X = X if issparse(X) else np.asarray(X)
    G = n_rows * gradient_sum(X[row:row + 1], np.asarray(y)[row:row + 1], W, terms)
    return perturb(G, sensitivity=terms.sensitivity, multiplier=terms.multiplier,
                   noise="gaussian", sampler=terms.sampler, rng=_generator(key))


@_quiet
def block_summary(X, y, want_norm, want_y, want_classes):
    """Validation of a block and, only when a bound is None (the caller warns:
    a leak), the statistic that replaces it: its row count, features and
    whether all values are finite; max row norm, max |y|, labels."""
    X = as_csr(X) if issparse(X) else np.asarray(X, dtype=np.float64)
    y = np.asarray(y).ravel()
    out = {"n_rows": int(X.shape[0]), "n_features": int(X.shape[1]) if X.ndim == 2 else -1,
           "n_labels": int(y.shape[0]),
           "finite": bool(np.isfinite(X.data if issparse(X) else X).all())}
    if y.dtype.kind in "fc":
        out["finite"] = out["finite"] and bool(np.isfinite(y).all())
    if want_norm and X.size:
        sq = row_sq_norms(X) if issparse(X) else np.einsum("ij,ij->i", X, X)
        out["max_norm"] = float(np.sqrt(sq.max()))
    if want_y and y.size:
        out["max_y"] = float(np.max(np.abs(y.astype(np.float64))))
    if want_classes:
        out["labels"] = np.unique(y)
    return out
