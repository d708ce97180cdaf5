"""Built-in submodular costs for selecting items (columns) from a data row.

Every built-in cost has the form

    f(S; r) = h(S) + sum_{i in S} m_i(r),    m(r) = -clip(r, -row_bound, row_bound),

a *public* submodular part h (fixed by the cost's parameters, never by data)
plus a *modular* part read from the row: item i earns its (clipped) value
r_i when selected, and h charges for the set. Any numeric row works: entries
are clipped to [-row_bound, row_bound] (default 1) before use, so scale the
data so that the interesting range fits (e.g. standardised columns / 3).

The split gives a tighter sensitivity than the range bound: the chain
increments of f are those of h (identical for neighbouring rows at the same
public point) plus m(r) itself, so replacing a row moves a full-information
subgradient by ||m(r) - m(r')||_2 <= 2 ||m||_max, with
``modular_norm(n) = row_bound sqrt(n)`` for the box clip (see
:class:`~skdpol.submodular.SubmodularPFTAL`).
"""

from abc import ABC, abstractmethod

import numpy as np

__all__ = ["ConcaveMassCost", "CutCost", "PublicPlusModularCost"]


class PublicPlusModularCost(ABC):
    """Base class: f(S; r) = public(S) + <modular(r), 1_S>.

    Subclasses implement ``public(masks)`` (data-independent, submodular) and
    ``public_bound(n)`` (a bound on |h|).
    """

    def __init__(self, row_bound=1.0):
        if not row_bound > 0:
            raise ValueError(f"row_bound must be > 0, got {row_bound!r}.")
        self.row_bound = float(row_bound)

    def modular(self, rows):
        """Per-item values m(r) = -clip(r, -row_bound, row_bound), shape (b, n)."""
        return -np.clip(np.asarray(rows, dtype=np.float64), -self.row_bound, self.row_bound)

    def modular_norm(self, n_items):
        """L2 bound on one row's modular part: row_bound sqrt(n)."""
        return self.row_bound * np.sqrt(n_items)

    def bound(self, n_items):
        """|f(S; r)| <= public_bound(n) + n row_bound for every S and row."""
        return self.public_bound(n_items) + n_items * self.row_bound

    def __call__(self, masks, row):
        masks = np.asarray(masks, dtype=bool)
        return self.public(masks) + masks @ self.modular(row[None, :])[0]

    @abstractmethod
    def public(self, masks):
        """h(S) for each row of ``masks`` (k, n): data-independent, submodular."""

    @abstractmethod
    def public_bound(self, n_items):
        """A bound on |h(S)| over all sets of ``n_items`` items."""


class ConcaveMassCost(PublicPlusModularCost):
    """f(S; r) = scale sqrt(sum_{i in S} w_i) - sum_{i in S} clip(r_i).

    A price for the bundle that grows with diminishing returns (a fixed cost
    of going to market, then cheaper per item) against the row's reward
    for each item.

    Submodular: for w >= 0 the mass w(S) is modular and monotone, and for a
    concave phi the gain phi(w(A) + w_i) - phi(w(A)) of adding item i can only
    shrink as w(A) grows; so for A subset of B (w(A) <= w(B)) the gain on A is
    at least the gain on B -- diminishing returns. Subtracting a modular
    function keeps every gain's difference unchanged.

    Parameters
    ----------
    scale : float, default=0.5
    weights : array-like of shape (n,) or None
        Non-negative item weights; None means all ones (any n).
    row_bound : float, default=1.0
        Row entries are clipped to [-row_bound, row_bound].

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import ConcaveMassCost
    >>> cost = ConcaveMassCost(scale=1.0)
    >>> masks = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0]], dtype=bool)
    >>> cost(masks, np.array([0.8, 5.0, -0.3])).round(3).tolist()  # 5.0 clipped to 1
    [0.0, 0.2, -0.386]
    >>> float(cost.bound(3))  # sqrt(3) + 3
    4.732050807568877
    """

    def __init__(self, scale=0.5, weights=None, row_bound=1.0):
        super().__init__(row_bound)
        if not scale >= 0:
            raise ValueError(f"scale must be >= 0, got {scale!r}.")
        self.scale = float(scale)
        self.weights = None
        if weights is not None:
            self.weights = np.asarray(weights, dtype=np.float64)
            if self.weights.ndim != 1 or np.any(self.weights < 0):
                raise ValueError("weights must be a 1-d array of non-negative numbers.")

    def _mass(self, masks):
        return masks.sum(axis=-1) if self.weights is None else masks @ self.weights

    def public(self, masks):
        return self.scale * np.sqrt(self._mass(np.asarray(masks, dtype=bool)))

    def public_bound(self, n_items):
        total = n_items if self.weights is None else self.weights.sum()
        return self.scale * np.sqrt(total)


class CutCost(PublicPlusModularCost):
    """f(S; r) = scale cut_W(S) - sum_{i in S} clip(r_i).

    cut_W(S) = sum_{i in S, j not in S} W_ij for a public symmetric
    non-negative item graph W (say |correlation| of the columns on public
    data): splitting related items is charged, so groups get selected
    together.

    Submodular: cut_W is a sum over edges of W_ij [exactly one of i, j in S];
    each term is submodular (on {i, j}: f({i}) + f({j}) = 2 W_ij >=
    f({i, j}) + f({}) = 0, and it ignores the other items), and non-negative
    sums of submodular functions are submodular; the modular part changes
    nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import CutCost
    >>> W = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float)
    >>> cost = CutCost(W, scale=0.5)
    >>> masks = np.array([[1, 0, 0], [1, 1, 0]], dtype=bool)
    >>> cost(masks, np.array([0.2, 0.2, 0.9])).tolist()
    [0.3, -0.4]
    """

    def __init__(self, adjacency, scale=1.0, row_bound=1.0):
        super().__init__(row_bound)
        W = np.asarray(adjacency, dtype=np.float64)
        if W.ndim != 2 or W.shape[0] != W.shape[1] or not np.allclose(W, W.T):
            raise ValueError("adjacency must be a symmetric square matrix.")
        if np.any(W < 0) or not np.all(np.isfinite(W)):
            raise ValueError("adjacency must be finite and non-negative.")
        self.adjacency = W - np.diag(np.diag(W))  # self-loops are never cut
        if not scale >= 0:
            raise ValueError(f"scale must be >= 0, got {scale!r}.")
        self.scale = float(scale)

    def public(self, masks):
        S = np.asarray(masks, dtype=np.float64)
        return self.scale * np.einsum("ki,ki->k", S @ self.adjacency, 1.0 - S)

    def public_bound(self, n_items):
        return self.scale * self.adjacency.sum() / 2.0  # every edge cut at most once
