"""Losses of linear models, with the constants the privacy proofs need.

A model is a matrix ``W`` of shape (k, d): k = 1 for the squared, binary
logistic and hinge losses, k = n_classes for the multinomial loss. A row
``v`` (norm <= R) gives the margins ``s = W v`` and the loss ``l(s, y)``;
the gradient in ``W`` is ``l'(s, y) v^T``, so its Frobenius norm is
``||l'(s, y)|| ||v||``. Every bound below follows from that identity:

=============  ===================  ==========================  =============
loss           ||l'(s, y)||          Lipschitz in W on ||W||<=B  smoothness
=============  ===================  ==========================  =============
squared        |s - y| <= RB + M     R (R B + M)                 R^2
huber (C)      |clip(s - y)| <= C    C R                         R^2
logistic       sigmoid(-ys) <= 1     R                           R^2 / 4
multinomial    ||p - e_y|| <= sqrt2  sqrt(2) R                   R^2 / 2
hinge          <= 1                  R                           (not smooth)
=============  ===================  ==========================  =============

(multinomial: ||p - e_y||^2 = (1 - p_y)^2 + sum_{j != y} p_j^2 <= 2, and the
softmax Hessian diag(p) - p p^T has spectral norm <= 1/2.) None of the losses
is strongly convex in W; the estimators add ``alpha/2 ||W||^2``.
"""

import math
from abc import ABC, abstractmethod

import numpy as np
from scipy.sparse import issparse
from scipy.special import expit, log_expit, logsumexp, softmax


class _Loss(ABC):
    """Interface: margins ``S`` (n, k), encoded labels ``y`` (n,)."""

    n_outputs = 1
    smooth = True

    @abstractmethod
    def value(self, S, y):
        """Per-row losses, shape (n,)."""

    @abstractmethod
    def derivative(self, S, y):
        """dl/ds per row, shape (n, k)."""

    @abstractmethod
    def curvature_product(self, S, y, dS):
        """d2l/ds2 applied to dS per row, shape (n, k)."""

    @abstractmethod
    def lipschitz(self, row_bound, radius):
        """Bound on ||grad_W l|| for rows of norm <= row_bound, ||W|| <= radius."""

    @abstractmethod
    def smoothness(self, row_bound):
        """Lipschitz constant of grad_W l for rows of norm <= row_bound."""

    @abstractmethod
    def value_at_zero(self):
        """Largest loss of the zero model (bounds the regularised optimum)."""

    @abstractmethod
    def max_value(self, row_bound, radius):
        """Largest loss over rows of norm <= row_bound and ||W|| <= radius."""

    def gradient(self, W, X, y):
        """Sum over the rows of grad_W l, shape (k, d). ``X`` is an array or
        rows that multiply without a copy (``UnitRows``: ``matmul`` / ``rmatmul``;
        CSR: the sparse products ``X @ W.T`` and ``X.T @ D``, O(nnz k))."""
        if issparse(X):
            return np.asarray((X.T @ self.derivative(X @ W.T, y)).T)
        if not isinstance(X, np.ndarray):
            return X.rmatmul(self.derivative(X.matmul(W.T), y).T)
        if W.shape[0] == 1:
            # one output: np.dot makes the BLAS calls matmul makes here (the
            # same gemv on the rows, both ways; a dot or an axpy on one row)
            # with less overhead per call, and this runs once a round
            return np.dot(self.derivative(np.dot(X, W.T), y).T, X)
        return self.derivative(X @ W.T, y).T @ X

    def optimum_radius(self, alpha):
        """Radius of a ball holding the minimiser of mean l + alpha/2 ||W||^2.

        At the minimiser W*, alpha/2 ||W*||^2 <= objective(W*) <= objective(0).
        """
        return math.sqrt(2.0 * self.value_at_zero() / alpha)


class SquaredLoss(_Loss):
    """l(s, y) = (s - y)^2 / 2 with |y| <= ``y_bound``."""

    def __init__(self, y_bound):
        self.y_bound = float(y_bound)

    def value(self, S, y):
        return 0.5 * (S[:, 0] - y) ** 2

    def derivative(self, S, y):
        return S - y[:, None]

    def curvature_product(self, S, y, dS):
        return dS

    def lipschitz(self, row_bound, radius):
        return row_bound * (row_bound * radius + self.y_bound)

    def smoothness(self, row_bound):
        return row_bound**2

    def value_at_zero(self):
        return 0.5 * self.y_bound**2

    def max_value(self, row_bound, radius):
        return 0.5 * (row_bound * radius + self.y_bound) ** 2


class HuberLoss(_Loss):
    """Huber's loss of the residual r = s - y with threshold C (``threshold``).

    l = r^2 / 2 for |r| <= C and C |r| - C^2 / 2 beyond, so l'(s, y) =
    clip(s - y, -C, C): the squared loss with its residual clipped, which is
    what bounds the gradient (by C R, whatever the labels and W). Labels
    |y| <= ``y_bound`` only matter for the loss *values* (``value_at_zero``,
    ``max_value``); with the default ``y_bound=inf`` those are infinite.
    """

    def __init__(self, threshold, y_bound=math.inf):
        self.threshold = float(threshold)
        self.y_bound = float(y_bound)

    def _huber(self, r):
        C, a = self.threshold, np.abs(r)
        return np.where(a <= C, 0.5 * r * r, C * a - 0.5 * C * C)

    def value(self, S, y):
        return self._huber(S[:, 0] - y)

    def derivative(self, S, y):
        # np.clip's values through maximum / minimum without its Python
        # wrapper (the same numbers, NaN included): ftrl-momentum calls this
        # once a round of 100 rows
        C = self.threshold
        r = np.subtract(S, y[:, None])
        return np.minimum(np.maximum(r, -C, out=r), C, out=r)

    def curvature_product(self, S, y, dS):
        return (np.abs(S - y[:, None]) < self.threshold) * dS

    def lipschitz(self, row_bound, radius):
        return self.threshold * row_bound

    def smoothness(self, row_bound):
        return row_bound**2

    def value_at_zero(self):
        return float(self._huber(np.float64(self.y_bound)))

    def max_value(self, row_bound, radius):
        return float(self._huber(np.float64(row_bound * radius + self.y_bound)))


class LogisticLoss(_Loss):
    """l(s, y) = log(1 + exp(-y s)) with y in {-1, +1}."""

    def value(self, S, y):
        return -log_expit(y * S[:, 0])

    def derivative(self, S, y):
        return (-y * expit(-y * S[:, 0]))[:, None]

    def gradient(self, W, X, y):
        # the generic one-output path on 1-d margins, -y formed once: the
        # same BLAS calls (see _Loss.gradient) and the same values
        ny = -y
        if issparse(X):  # CSR: two sparse products, O(nnz)
            return (X.T @ (ny * expit(ny * (X @ W[0]))))[None, :]
        if not isinstance(X, np.ndarray):  # UnitRows: the same products, uncopied
            return X.rmatvec(ny * expit(ny * X.matvec(W[0])))[None, :]
        return np.dot(ny * expit(ny * np.dot(X, W[0])), X)[None, :]

    def curvature_product(self, S, y, dS):
        p = expit(S)
        return p * (1.0 - p) * dS

    def lipschitz(self, row_bound, radius):
        return row_bound

    def smoothness(self, row_bound):
        return row_bound**2 / 4.0

    def value_at_zero(self):
        return math.log(2.0)

    def max_value(self, row_bound, radius):
        return float(np.logaddexp(0.0, row_bound * radius))


class MultinomialLoss(_Loss):
    """Cross-entropy of softmax(s) for labels y in {0, ..., n_classes - 1}.

    Labels may be stored as floats (whole numbers); they are cast to indices.
    """

    def __init__(self, n_classes):
        self.n_outputs = int(n_classes)

    def value(self, S, y):
        return logsumexp(S, axis=1) - S[np.arange(S.shape[0]), y.astype(np.intp)]

    def derivative(self, S, y):
        P = softmax(S, axis=1)
        P[np.arange(S.shape[0]), y.astype(np.intp)] -= 1.0
        return P

    def curvature_product(self, S, y, dS):
        P = softmax(S, axis=1)
        return P * dS - P * np.sum(P * dS, axis=1, keepdims=True)

    def lipschitz(self, row_bound, radius):
        return math.sqrt(2.0) * row_bound

    def smoothness(self, row_bound):
        return row_bound**2 / 2.0

    def value_at_zero(self):
        return math.log(self.n_outputs)

    def max_value(self, row_bound, radius):
        # the margins spread by at most 2 R B (||s||_inf <= R B), so
        # logsumexp(s) - s_y <= 2 R B + log k
        return 2.0 * row_bound * radius + math.log(self.n_outputs)


class HingeLoss(_Loss):
    """l(s, y) = max(0, 1 - y s) with y in {-1, +1} (a subgradient at the kink)."""

    smooth = False

    def value(self, S, y):
        return np.maximum(0.0, 1.0 - y * S[:, 0])

    def derivative(self, S, y):
        return np.where(y * S[:, 0] < 1.0, -y, 0.0)[:, None]

    def curvature_product(self, S, y, dS):
        raise ValueError("the hinge loss is not smooth.")

    def lipschitz(self, row_bound, radius):
        return row_bound

    def smoothness(self, row_bound):
        return math.inf

    def value_at_zero(self):
        return 1.0

    def max_value(self, row_bound, radius):
        return 1.0 + row_bound * radius
