"""Lovasz extension, its subgradients, threshold rounding and the bandit estimator.

A cost is a *batch* callable ``cost(masks) -> values``: ``masks`` is a boolean
(k, n) array of sets, the result k real numbers. One subgradient needs the
n + 1 sets of a chain; they go to the cost in a single call.

For x in [0, 1]^n sort the coordinates decreasingly, pi(1), ..., pi(n), and
let A_0 = {}, A_i = {pi(1), ..., pi(i)}. Then x = sum_i lambda_i 1_{A_i} with
lambda_0 = 1 - x_pi(1), lambda_i = x_pi(i) - x_pi(i+1), lambda_n = x_pi(n)
(non-negative, summing to 1), the Lovasz extension is
f_L(x) = sum_i lambda_i f(A_i), and g_pi(i) = f(A_i) - f(A_{i-1}) is a
subgradient of f_L at x when f is submodular. Ties are broken by item index
(a stable sort): any order of tied items gives a valid chain.
"""

import numpy as np

__all__ = [
    "bandit_gradient",
    "bandit_probabilities",
    "bandit_sample",
    "chain",
    "check_cost_value",
    "clip_costs",
    "evaluate_costs",
    "lovasz_extension",
    "lovasz_subgradient",
    "threshold_round",
]


def chain(x):
    """The maximal chain of ``x`` and its convex weights.

    Parameters
    ----------
    x : array-like of shape (n,) or (b, n)
        Point(s) of the cube [0, 1]^n.

    Returns
    -------
    order : ndarray of int, shape (..., n)
        ``order[k]`` is pi(k + 1), the item of the (k + 1)-th largest coordinate.
    weights : ndarray, shape (..., n + 1)
        lambda_0, ..., lambda_n (>= 0, summing to 1).
    masks : ndarray of bool, shape (..., n + 1, n)
        ``masks[i]`` is the set A_i.

    Examples
    --------
    >>> from skdpol.submodular import chain
    >>> order, weights, masks = chain([0.2, 0.9, 0.5])
    >>> order.tolist(), weights.round(2).tolist()
    ([1, 2, 0], [0.1, 0.4, 0.3, 0.2])
    >>> masks.astype(int).tolist()
    [[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 1, 1]]
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim not in (1, 2) or x.shape[-1] < 1:
        raise ValueError(f"x must have shape (n,) or (b, n) with n >= 1, got {x.shape}.")
    if not (np.all(x >= 0.0) and np.all(x <= 1.0)):  # also refuses NaN
        raise ValueError("x must lie in the cube [0, 1]^n.")
    n = x.shape[-1]
    order = np.argsort(-x, axis=-1, kind="stable")
    ones = np.ones(x.shape[:-1] + (1,))
    padded = np.concatenate([ones, np.take_along_axis(x, order, axis=-1), 0 * ones], axis=-1)
    weights = padded[..., :-1] - padded[..., 1:]
    rank = np.argsort(order, axis=-1)  # inverse permutation: item -> position
    masks = rank[..., None, :] < np.arange(n + 1)[:, None]
    return order, weights, masks


def clip_costs(values, bound, n_values):
    """Check ``n_values`` cost values and clip them to ``[-bound, bound]``.

    Raises ``ValueError`` (naming the problem) for a wrong shape, a
    non-real dtype, NaN or infinity; ``bound=None`` checks without clipping.

    Examples
    --------
    >>> from skdpol.submodular import clip_costs
    >>> clip_costs([0.5, -3.0, 2.0], 1.0, 3).tolist()
    [0.5, -1.0, 1.0]
    >>> clip_costs([1.0, float("nan")], 1.0, 2)
    Traceback (most recent call last):
    ...
    ValueError: the cost returned NaN or infinity for 1 of 2 sets.
    """
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"the cost must return real numbers, got dtype {arr.dtype}.")
    if arr.shape != (n_values,):
        raise ValueError(f"the cost returned shape {arr.shape}; expected ({n_values},), "
                         "one value per set (row of masks).")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"the cost returned NaN or infinity for {int(bad.sum())} "
                         f"of {n_values} sets.")
    return arr if bound is None else np.clip(arr, -bound, bound)


def check_cost_value(value, bound):
    """One observed cost (bandit feedback): a finite real scalar, clipped."""
    arr = np.asarray(value)
    if arr.size != 1 or arr.ndim > 1:
        raise ValueError(f"a bandit cost must be a single number, got shape {arr.shape}.")
    return float(clip_costs(arr.reshape(1), bound, 1)[0])


def evaluate_costs(cost, masks, bound=None):
    """``cost(masks)`` checked (and clipped to ``bound``) by :func:`clip_costs`."""
    masks = np.asarray(masks, dtype=bool)
    return clip_costs(cost(masks), bound, masks.shape[0])


def _chain_values(cost, x, cost_bound):
    order, weights, masks = chain(x)
    n = masks.shape[-1]
    values = evaluate_costs(cost, masks.reshape(-1, n), cost_bound)
    return order, weights, values.reshape(weights.shape)


def lovasz_extension(cost, x, *, cost_bound=None):
    """Lovasz extension f_L(x) = sum_i lambda_i f(A_i) (one batch cost call).

    Parameters
    ----------
    cost : callable
        ``cost(masks) -> values`` for boolean masks of shape (k, n).
    x : array-like of shape (n,) or (b, n)
    cost_bound : float or None
        Clip every cost value to ``[-cost_bound, cost_bound]`` first.

    Returns
    -------
    float or ndarray of shape (b,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import lovasz_extension
    >>> def cost(masks):  # sqrt(|S|) - |S| / 2, submodular
    ...     size = masks.sum(axis=1)
    ...     return np.sqrt(size) - size / 2
    >>> float(lovasz_extension(cost, [1.0, 0.0, 1.0]))  # a vertex: f({0, 2})
    0.41421356237309515
    >>> lovasz_extension(cost, np.full((2, 3), 0.5)).round(4).tolist()
    [0.116, 0.116]
    """
    _, weights, values = _chain_values(cost, x, cost_bound)
    return np.sum(weights * values, axis=-1)


def lovasz_subgradient(cost, x, *, cost_bound=None):
    """Subgradient g_pi(i) = f(A_i) - f(A_{i-1}) of f_L at ``x``.

    One argsort and one batch cost call of n + 1 sets per point; ``x`` of
    shape (b, n) gives (b, n). Costs are clipped to ``cost_bound`` first.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import lovasz_subgradient
    >>> def cost(masks):
    ...     size = masks.sum(axis=1)
    ...     return np.sqrt(size) - size / 2
    >>> lovasz_subgradient(cost, [0.3, 0.8, 0.1]).round(3).tolist()
    [-0.086, 0.5, -0.182]
    """
    order, _, values = _chain_values(cost, x, cost_bound)
    g = np.empty(order.shape)
    np.put_along_axis(g, order, np.diff(values, axis=-1), axis=-1)
    return g


def threshold_round(x, rng):
    """Random set S = {i : x_i > U}, U ~ U[0, 1) (one U per point).

    P(i in S) = P(U < x_i) = x_i, and S is the chain set A_i with
    probability lambda_i, so E f(S) = f_L(x). The strict inequality makes
    x_i = 0 never selected and x_i = 1 always selected, since ``rng.random()``
    lies in [0, 1); ties have probability 0 (at most 2^-53 in floating point).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import threshold_round
    >>> threshold_round(np.array([0.0, 1.0, 0.5]), np.random.default_rng(0)).tolist()
    [False, True, False]
    """
    x = np.asarray(x, dtype=np.float64)
    u = rng.random(x.shape[:-1] + (1,))
    return x > u


def bandit_probabilities(weights, mu):
    """rho_i = (1 - mu) lambda_i + mu / (n + 1): every chain set has rho_i >= mu / (n + 1)."""
    weights = np.asarray(weights, dtype=np.float64)
    return (1.0 - mu) * weights + mu / weights.shape[-1]


def bandit_sample(x, mu, rng):
    """Draw the set to play under bandit feedback.

    Returns
    -------
    i : int
        Index of the chosen chain set, drawn with probability ``rho[i]``.
    mask : ndarray of bool, shape (n,)
        The set A_i.
    rho_i : float
    order : ndarray of int, shape (n,)
    weights : ndarray, shape (n + 1,)

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import bandit_sample
    >>> i, mask, rho_i, order, weights = bandit_sample(
    ...     np.array([0.9, 0.1]), 0.3, np.random.default_rng(1))
    >>> int(i), mask.tolist(), round(float(rho_i), 3)
    (1, [True, False], 0.66)
    """
    if not 0.0 < mu <= 1.0:
        raise ValueError(f"mu must be in (0, 1], got {mu!r}.")
    order, weights, masks = chain(x)
    if order.ndim != 1:
        raise ValueError("bandit_sample takes one point x of shape (n,).")
    rho = bandit_probabilities(weights, mu)
    cum = np.cumsum(rho)
    i = min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), rho.size - 1)
    return i, masks[i], float(rho[i]), order, weights


def bandit_gradient(value, i, rho_i, order, n, rng):
    """One-point estimate of the Lovasz subgradient from f(A_i) alone.

    i = 0: -(f(A_0) / rho_0) e_pi(1); i = n: (f(A_n) / rho_n) e_pi(n);
    0 < i < n: a fair sign s, s = +1: (2 f(A_i) / rho_i) e_pi(i),
    s = -1: -(2 f(A_i) / rho_i) e_pi(i+1).

    Unbiased (re-derived): coordinate pi(j) receives +f(A_j) from i = j
    (probability rho_j, times 1/2 for the sign when j < n, which the factor 2
    undoes) and -f(A_{j-1}) from i = j - 1 (likewise), so
    E g^_pi(j) = f(A_j) - f(A_{j-1}), the full-information subgradient,
    provided every rho_i > 0 -- guaranteed by mu > 0. The construction in
    algorithms.md is therefore unbiased as stated. ``rng`` is drawn from
    only when 0 < i < n.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.submodular import bandit_gradient
    >>> bandit_gradient(1.5, 0, 0.25, np.array([2, 0, 1]), 3, None).tolist()
    [0.0, 0.0, -6.0]
    """
    g = np.zeros(n)
    if i == 0:
        g[order[0]] = -value / rho_i
    elif i == n:
        g[order[n - 1]] = value / rho_i
    elif rng.random() < 0.5:
        g[order[i - 1]] = 2.0 * value / rho_i
    else:
        g[order[i]] = -2.0 * value / rho_i
    return g
