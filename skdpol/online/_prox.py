"""The implicit (proximal) step of IGD, solved to a certified accuracy.

``implicit_step`` returns W with ||W - W*|| <= tol, where
W* = argmin_W 1/2 ||W - Z||^2 + eta * mean_i l(W v_i, y_i). The objective is
1-strongly convex, so the norm of its gradient at W bounds the distance to
W*: the solver stops only once that certificate holds. The privacy proofs
(:mod:`skdpol.online._gradient`) budget for this error explicitly.

One row with a scalar margin (the seeds' per-row rounds) is solved in the
margin s = v.W: closed form for the squared and hinge losses, a safeguarded
scalar Newton iteration for the logistic loss. Anything else uses Newton-CG
on W with Hessian-vector products (no d x d matrix is formed), and, if
that stalls (saturated softmax margins), scipy's trust-region Newton-CG.

No exception depends on the data. If those solvers cannot certify the
accuracy, the step ends with accelerated gradient descent run for a number
of iterations that *guarantees* it (``_guaranteed``): the objective is
1-strongly convex and (1 + eta beta)-smooth (beta the loss's smoothness for
the round's rows), and the start is within r0 of the optimum (r0 = eta L
from Z, L the per-row gradient bound, or the certified ||grad|| of the best
iterate), so Nesterov's method reaches ||W - W*|| <= tol after
N = 2 ln(sqrt(kappa + 1) r0 / tol) / -ln(1 - 1/sqrt(kappa)) steps,
kappa = 1 + eta beta. An error would be a release that depends on one row
(review finding 6: one label flipped an exception into a model).
"""

import math

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from ..losses import HingeLoss, LogisticLoss, SquaredLoss
from ..utils import dot, issparse, row_sq_norms, tdot, tmatmul

_MAX_NEWTON = 30


def _total(a):
    # np.sum without its Python wrapper (the same pairwise sum): the solver
    # takes a few dozen sums a round
    return np.add.reduce(a, axis=None)


class ProxNotConvergedError(RuntimeError):
    """The implicit step could not certify its accuracy (state is unchanged)."""


def implicit_step(loss, Z, X, y, eta, tol):
    """Certified solution of the implicit step (see the module notes).

    Parameters
    ----------
    loss : skdpol.losses loss
    Z : ndarray (k, d)
        Centre of the proximal term.
    X : ndarray (b, d), y : ndarray (b,)
        The round's rows (clipped) and encoded labels.
    eta : float
        Step size of the round's mean loss.
    tol : float
        Required bound on the distance to the exact minimiser.
    """
    if X.shape[0] == 1 and loss.n_outputs == 1:
        # a CSR round of one row: that row dense (d values; never a chunk)
        v = X.toarray()[0] if issparse(X) else X[0]
        return _one_row(loss, Z, v, float(y[0]), eta, tol)
    if not loss.smooth:
        raise ValueError(
            "the implicit step of a non-smooth loss is implemented for one row "
            "per round only: use batch_size=1."
        )
    try:
        return _newton_cg(loss, Z, X, y, eta, tol)
    except ProxNotConvergedError as failed:
        return _guaranteed(loss, Z, X, y, eta, tol, failed.args[1], failed.args[2])


def _one_row(loss, Z, v, y, eta, tol):
    z = Z[0]
    a = float(z @ v)
    k = eta * float(v @ v)
    if isinstance(loss, SquaredLoss):
        s = (a + k * y) / (1.0 + k)
        g = s - y
    elif isinstance(loss, HingeLoss):
        if y * a >= 1.0:
            g = 0.0
        elif y * a + k <= 1.0:
            g = -y
        else:  # lands on the kink y s = 1
            g = (a - y) / k
    elif isinstance(loss, LogisticLoss):
        try:
            g = _logistic_root(a, k, y, eta * math.sqrt(v @ v), tol)
        except ProxNotConvergedError:
            return _guaranteed(loss, Z, v[None, :], np.array([y]), eta, tol, Z, math.inf)
    else:  # pragma: no cover - every scalar loss is listed above
        return _newton_cg(loss, Z, v[None, :], np.array([y]), eta, tol)
    return (z - (eta * g) * v)[None, :]


def _logistic_root(a, k, y, scale, tol):
    """g = l'(s) at the root of s + k l'(s) = a, l'(s) = -y sigmoid(-y s).

    phi(s) = s + k l'(s) - a is increasing (l' is), and its root lies between
    a and a - k l'(a). The distance of W = z - eta g v to the exact step is
    scale * |l'(a - k g) - g| with scale = eta ||v|| (1-strong convexity).
    """
    def deriv(s):
        return -y * expit(-y * s)

    g0 = deriv(a)
    lo, hi = sorted((a, a - k * g0))
    s = a - k * g0 / (1.0 + k * 0.25)
    for _ in range(200):  # Newton, or bisection when it leaves the bracket
        g = deriv(s)
        if scale * abs(deriv(a - k * g) - g) <= tol:
            return g
        phi = s + k * g - a
        if phi > 0:
            hi = s
        else:
            lo = s
        p = expit(s)
        step = phi / (1.0 + k * p * (1.0 - p))
        s_new = s - step
        s = s_new if lo < s_new < hi else 0.5 * (lo + hi)
    raise ProxNotConvergedError("the implicit logistic step did not converge.")  # -> _guaranteed


def _newton_cg(loss, Z, X, y, eta, tol):
    c = eta / X.shape[0]

    # (dot / tdot: np.dot on arrays, the sparse products on CSR rows)
    # np.dot makes the BLAS calls matmul makes on these 2-d operands (gemv
    # for one output, gemm with the same transposes otherwise) with less
    # overhead per call: a round takes a dozen or two of these products
    def objective(W, S=None):
        # S = X @ W.T when the caller has it already (the line search does)
        S = dot(X, W.T) if S is None else S
        return 0.5 * _total((W - Z) ** 2) + c * _total(loss.value(S, y))

    def gradient(W, S):
        return (W - Z) + c * tdot(loss.derivative(S, y).T, X)

    W = Z.copy()
    S = dot(X, W.T)
    grad = gradient(W, S)
    gnorm = math.sqrt(_total(grad * grad))
    F = objective(W, S)
    for _ in range(_MAX_NEWTON):
        if gnorm <= tol:
            return W

        def hessp(U, S=S):
            return U + c * tdot(loss.curvature_product(S, y, dot(X, U.T)).T, X)

        P = _conjugate_gradient(hessp, -grad, rtol=min(0.1, math.sqrt(gnorm)))
        slope = float(_total(grad * P))
        step = 1.0
        for _ in range(40):
            W_new = W + step * P
            S_new = dot(X, W_new.T)
            grad_new = gradient(W_new, S_new)
            gnorm_new = math.sqrt(_total(grad_new * grad_new))
            F_new = objective(W_new, S_new)
            # Armijo on F, or (near the optimum, where F no longer resolves
            # the decrease) a smaller gradient: both keep Newton globally safe
            if F_new <= F + 1e-4 * step * slope or gnorm_new < 0.5 * gnorm:
                break
            step *= 0.5
        W, S, grad, gnorm, F = W_new, S_new, grad_new, gnorm_new, F_new
    return _trust_region(objective, gradient, loss, Z, X, y, c, W, tol)


def _trust_region(objective, gradient, loss, Z, X, y, c, W0, tol):
    """Fallback for saturated softmax margins, where line-searched Newton crawls."""
    shape = W0.shape

    def fun(w):
        return objective(w.reshape(shape))

    def jac(w):
        W = w.reshape(shape)
        return gradient(W, X @ W.T).ravel()

    def hessp(w, p):
        W, U = w.reshape(shape), p.reshape(shape)
        S = X @ W.T
        return (U + c * tmatmul(loss.curvature_product(S, y, X @ U.T).T, X)).ravel()

    res = minimize(fun, W0.ravel(), jac=jac, hessp=hessp, method="trust-ncg",
                   options=dict(gtol=tol, maxiter=1000))
    W = res.x.reshape(shape)
    grad = gradient(W, X @ W.T)
    gnorm = math.sqrt(np.sum(grad * grad))
    if gnorm <= tol:
        return W
    # the best iterate and its certified distance to the optimum
    raise ProxNotConvergedError("the implicit step did not converge.", W, gnorm)


def _guaranteed(loss, Z, X, y, eta, tol, W_best, bound_best):
    """Accelerated gradient descent with an iteration count that guarantees
    ||W - W*|| <= tol whatever the data (see the module notes)."""
    sq = row_sq_norms(X) if issparse(X) else np.einsum("ij,ij->i", X, X)
    row_norm = float(np.sqrt(np.max(sq)))
    kappa = 1.0 + eta * loss.smoothness(row_norm)  # mean loss: same smoothness bound
    r_z = eta * loss.lipschitz(row_norm, math.inf)  # ||Z - W*|| = eta ||mean grad l(W*)||
    start, r0 = (Z, r_z) if r_z <= bound_best else (W_best, bound_best)
    if r0 <= tol:
        return start.copy()
    rate = -math.log1p(-1.0 / math.sqrt(kappa)) if kappa > 1.0 else math.inf
    n_steps = math.ceil(2.0 * math.log(math.sqrt(kappa + 1.0) * r0 / tol) / rate)
    c = eta / X.shape[0]
    momentum = (math.sqrt(kappa) - 1.0) / (math.sqrt(kappa) + 1.0)
    W, W_prev = start.copy(), start.copy()
    for _ in range(n_steps):
        V = W + momentum * (W - W_prev)
        grad = (V - Z) + c * tmatmul(loss.derivative(X @ V.T, y).T, X)
        W_prev, W = W, V - grad / kappa
    return W


def _conjugate_gradient(hessp, b, rtol, max_iter=200):
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = float(_total(r * r))
    stop = (rtol**2) * rs
    for _ in range(max_iter):
        if rs <= stop:
            break
        Hp = hessp(p)
        step = rs / float(_total(p * Hp))
        x += step * p
        r -= step * Hp
        rs_new = float(_total(r * r))
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x
