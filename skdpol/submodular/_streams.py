"""A planted stream for online submodular minimisation (regret experiments).

Rows r_t = means + noise * N(0, I): planted items have mean ``high``, the
others ``low`` < 0. Under :class:`~skdpol.submodular.ConcaveMassCost` (unit
weights, rows clipped to [-1, 1]) the expected cost is

    F(S) = c sqrt(|S|) - sum_{i in S} m_i,   m_i = E clip(r_i, -1, 1)

(closed form for a clipped Gaussian). With m = m_hi on the planted set S*
(size s) and m_lo < 0 elsewhere, F is concave in |S| along S* and every
other item only adds cost, so S* is the unique minimiser when
c sqrt(s) < s m_hi; the default c = 0.75 sqrt(s) m_hi also makes every single
item look costly on its own (c > m_hi for s >= 2), so the learner must
learn the set, not each item alone.
"""

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ._costs import ConcaveMassCost

__all__ = ["SubmodularStream", "clipped_gaussian_mean", "make_submodular_stream"]


def clipped_gaussian_mean(mean, std, bound=1.0):
    """E clip(X, -bound, bound) for X ~ N(mean, std^2)."""
    mean = np.asarray(mean, dtype=np.float64)
    if std == 0:
        return np.clip(mean, -bound, bound)
    a, b = (-bound - mean) / std, (bound - mean) / std
    inside = mean * (norm.cdf(b) - norm.cdf(a)) + std * (norm.pdf(a) - norm.pdf(b))
    return -bound * norm.cdf(a) + bound * norm.sf(b) + inside


@dataclass
class SubmodularStream:
    """Rows, the planted set and the expected cost (for regret).

    Attributes
    ----------
    rows : ndarray (n_rounds, n_items)
    planted : ndarray of bool (n_items,)
        The unique minimiser S* of the expected cost.
    cost : ConcaveMassCost
        The cost each row defines: f_t(S) = cost(S, rows[t]).
    item_means : ndarray (n_items,)
        m_i = E clip(r_i).
    """

    rows: np.ndarray
    planted: np.ndarray
    cost: ConcaveMassCost
    item_means: np.ndarray

    def expected_cost(self, masks):
        """F(S) for boolean masks (k, n): the batch callable regret is measured with."""
        masks = np.asarray(masks, dtype=bool)
        return self.cost.public(masks) - masks @ self.item_means

    @property
    def optimal_cost(self):
        return float(self.expected_cost(self.planted[None, :])[0])


def make_submodular_stream(n_items=12, n_rounds=20_000, noise=1.0, *, planted_size=None,
                           high=0.5, low=-0.5, scale=None, random_state=None):
    """Planted stream whose expected cost is minimised by a known set.

    Parameters
    ----------
    n_items, n_rounds : int
    noise : float
        Standard deviation of the Gaussian noise on each row entry.
    planted_size : int or None
        |S*|; default ``max(2, n_items // 3)``.
    high, low : float
        Row means on and off the planted set (``low < 0 < high``).
    scale : float or None
        c of the cost; default ``0.75 sqrt(s) m_hi``.
    random_state : int, Generator or None

    Examples
    --------
    >>> from skdpol.submodular import make_submodular_stream
    >>> stream = make_submodular_stream(n_items=6, n_rounds=100, random_state=0)
    >>> stream.rows.shape, int(stream.planted.sum())
    ((100, 6), 2)
    >>> round(stream.optimal_cost, 4)
    -0.1658
    """
    rng = np.random.default_rng(random_state)
    s = max(2, n_items // 3) if planted_size is None else int(planted_size)
    if not 1 <= s <= n_items:
        raise ValueError(f"planted_size must be in [1, n_items], got {s}.")
    if not low < 0 < high:
        raise ValueError("need low < 0 < high so that only the planted items help.")
    planted = np.zeros(n_items, dtype=bool)
    planted[rng.choice(n_items, size=s, replace=False)] = True
    means = np.where(planted, high, low)
    item_means = clipped_gaussian_mean(means, noise)
    m_hi = float(item_means[planted][0])
    if scale is None:
        scale = 0.75 * np.sqrt(s) * m_hi
    if not scale * np.sqrt(s) < s * m_hi:
        raise ValueError("scale too large: the planted set would not be the minimiser.")
    rows = means + noise * rng.standard_normal((n_rounds, n_items))
    return SubmodularStream(rows=rows, planted=planted, cost=ConcaveMassCost(scale=scale),
                            item_means=item_means)
