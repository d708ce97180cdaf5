"""Least squares on coded labels: the classifier's second-order stream ("ls").

The logistic loss of a score s, log(1 + e^(-y s)), is log 2 - y s / 2 + s^2 / 8
+ O(s^4) at s = 0 (y^2 = 1): its second-order (PASS-GLM degree 2, Huggins et
al. 2017) surrogate is least squares on +-1 labels, whose minimiser needs only
the sufficient statistics V = sum v v^T and U = sum v y^T of the unit-space
rows v. Those two sums are released as prefix sums through the mechanisms of
the other streams (tree or BLT, one budget for every release), and the model
is solved from the released sums at each release: post-processing, free.

Labels (public coding)
----------------------
* two classes: one column, y in {-1, +1};
* k >= 3 classes: k columns, the one-hot label in {0, 1}^k. Least squares
  on the {-1, +1}^k coding 2 e_y - 1 gives the same argmax (its solution is
  2 W_01 minus one vector shared by every class, a per-row constant on the
  scores), but its labels have norm sqrt(k) instead of 1: sqrt(k) times the
  noise on U for the same decisions. So {0, 1}^k.

Rows
----
The stream gets unit-space rows (x / data_norm clipped to norm 1, then the
constant column 1; uncopied, ``UnitSpace.lazy_rows``, from a stream, and
copied, ``UnitSpace.rows``, from ``fit``) and multiplies the constant column
by ``INTERCEPT`` = 0.5 (exact: a power of two), so augmented rows have norm
<= R = sqrt(1 + c^2) = sqrt(1.25) instead of sqrt(2). The Gram's noise is
scaled by R^2 (below), so this cuts it by 1.6x, while the intercept's own
eigenvalue n c^2 stays far above the noise; the solved model's last
coordinate is multiplied by c, which is the same model on rows whose
constant column is 1 (prototype: c = 0.5 chosen on validation splits of
every table, docs/benchmarks/proto_streams.md).

Sensitivity (replace-one)
-------------------------
A round's leaf is z = [pack(sum v v^T) / s_V, vec(sum v y^T) / s_u]
(``pack`` keeps the Frobenius norm). Replacing the row (v, y) by (w, y'),
with ||v||, ||w|| <= R and label vectors of norm ||y||, ||y'|| <= M = 1
(both codings above):

* ||v v^T - w w^T||_F^2 = ||v||^4 + ||w||^4 - 2 (v.w)^2, as in PQFTL;
* ||v y^T - w y'^T||_F^2 = ||v||^2 ||y||^2 + ||w||^2 ||y'||^2 - 2 (v.w)(y.y')
  <= M^2 (||v||^2 + ||w||^2 + 2 |v.w|), since |y.y'| <= M^2 (Cauchy-Schwarz;
  for one scalar label this is PQFTL's bound).

Both blocks are bounded by the same functions of ||v||, ||w|| and v.w as
PQFTL's (:mod:`._ftl`), so its joint maximisation holds unchanged: the leaf
moves by at most ``joint_sensitivity(R, 1, s_V, s_u)``; with the balanced
scales s_V = 2 R^2, s_u = 2 R M that is sqrt(9/8) ~ 1.061, for any number of
classes (one-vs-rest would pay sqrt(k)). The sums are float64 sums of the
round's rows (of the caller's rows, uncopied, when no row is clipped: see
"Uncopied rounds" below), so the sensitivity handed to the prefix sums is
raised by their worst-case rounding error exactly as PQFTL's float leaves
(:func:`._ftl_float.float_leaf_sensitivity`; its u-block error
term sums ||v_i|| |y_i| over the round, which is <= b R M for label vectors
too). A replaced row changes one round's leaf and nothing else, so the whole
stream of releases is one run of the prefix-sum mechanism: its event is the
cost of every published model together.

Ridge from the public noise level
---------------------------------
The released Gram V_hat = V + E has symmetric noise E whose entries have std
sigma_V (the mechanism's per-coordinate std at this release, public, times
s_V), so ||E||_2 ~ sqrt(2 d) sigma_V (as PQFTL's floor). AdaSSP (Wang 2018)
solves (V_hat + lambda I) x = U_hat with lambda of the order of the noise's
spectral norm (less a private estimate of lambda_min(V), which on every
table measured is ~0 next to the noise and would only cost budget, so it is
not spent): here the eigenvalues of V_hat are clipped at 0 and lambda =
NOISE_RIDGE sqrt(2 d) sigma_V + n alpha is added (alpha a tiny per-row ridge
so that epsilon = inf and a singular Gram stay defined). NOISE_RIDGE = 0.3 beat
1 and 0.1 on validation splits of credit default and Adult
(docs/benchmarks/proto_streams.md, "Is the rule a test-set pick?"). No
shrinkage: with labels of norm 1 and n in the thousands the signal in U_hat
dwarfs its noise.

Published scores
----------------
The least-squares scores are mapped to the logistic model's scale so that
``predict_proba`` (sigmoid / softmax of the scores, as for every algorithm,
and for the shareable :class:`~skdpol.linear_model.PublicLinearClassifier`)
is sensible, and the published model stays linear. PASS-GLM's degree-2
surrogate of log(1 + e^(-s)), a0 + a1 s + a2 s^2, has the minimiser
-a1 / (2 a2) times the least-squares one on +-1 labels. The Taylor
expansion at 0 (a1 = -1/2, a2 = 1/8) gives 2, the slope of the linear
probability model p = (1 + s) / 2 at p = 1/2; but least squares flattens the
scores of confident rows, and the Chebyshev interpolant on [-4, 4] (logit
scores of probabilities 0.018-0.982) gives LOGIT_SCALE = 2.80. Test log
loss of one pass at epsilon = 1, medians of 5 seeds, credit default / Adult
(docs/benchmarks/classifier_stream.md): 0.457 / 0.382 with 2, 0.450 / 0.349
with 2.8, 0.453 / 0.345 with 3, 0.491 / 0.339 with 4; the linear probability
model clipped to [0.01, 0.99] gives 0.452 / 0.348 but is not a linear
model. For k classes the multinomial loss expanded at 0 gives
W_logit = k W_LS on the {0, 1}^k coding, up to a vector shared by the
classes (which softmax ignores); the same correction gives LOGIT_SCALE k / 2,
which for k = 2 is the binary model's (s_1 - s_0 = LOGIT_SCALE times the
+-1 score). Positive scalings change no decision and no AUC.
"""

import math

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsyrk as _syrk

from ..mechanisms import pack_symmetric, packed_dim, unpack_symmetric
from ..mechanisms import prefix_sum_mechanism
from ._ftl import default_scales, joint_sensitivity
from ._ftl_float import float_leaf_sensitivity
from ._rounds import ReplacedState, RoundBuffer

INTERCEPT = 0.5  # the constant column's value in the stream's sums (see the notes)
NOISE_RIDGE = 0.3  # lambda = NOISE_RIDGE sqrt(2 d) sigma_V (see the notes)
LOGIT_SCALE = 2.80  # published scores = LOGIT_SCALE x the +-1 least-squares scores
_LABEL_NORM = 1.0  # M: +-1 labels, or one-hot rows in {0, 1}^k


def noise_level_ridge(V, U, n_rows, noise_std_V, alpha, strength=NOISE_RIDGE):
    """Solve (V_+ + lambda I) W = U, V_+ = V with its eigenvalues clipped at 0.

    lambda = ``strength`` sqrt(2 d) ``noise_std_V`` + ``n_rows`` ``alpha``: a
    ridge of the order of the spectral norm of the noise on the released Gram
    (AdaSSP-like; see the module notes). ``V`` (d, d), ``U`` (d, k). Reads
    released sums and public numbers only (post-processing).
    """
    d = V.shape[0]
    ridge = strength * math.sqrt(2.0 * d) * float(noise_std_V) + float(n_rows) * alpha
    try:  # V positive definite: the clipping changes nothing, skip the eigh (10x dearer)
        scipy.linalg.cho_factor(V, check_finite=False)
        factor = scipy.linalg.cho_factor(V + ridge * np.eye(d), check_finite=False)
        return scipy.linalg.cho_solve(factor, U, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    lam, Q = np.linalg.eigh(V)
    denom = np.maximum(lam, 0.0) + ridge
    inv = np.divide(1.0, denom, out=np.zeros_like(denom), where=denom > 0)
    return Q @ ((Q.T @ U) * inv[:, None])


# Uncopied rounds (the stream's default path)
# -------------------------------------------
# The shell hands the stream its rows uncopied (UnitSpace.lazy_rows: the
# caller's rows X and a factor per row, f_i = 1 / data_norm, or 1 / ||x_i||
# for a row it clips; NaN / infinity raise there). Writing the unit rows out
# costs a copy of the chunk as dear as the Gram itself. When every row of a
# round has the same factor f (no row clipped, the common case with honest
# bounds), the round's sums of the unit rows v_i = f x_i (and the constant
# column a = 1 x INTERCEPT) are, exactly,
#     sum v v^T = f^2 X^T X,   sum v_j a = f a (1^T X)_j,   sum a^2 = m a^2,
#     sum v y^T = f X^T Y,     sum a y^T = a 1^T Y,
# so the leaf takes one Gram of the caller's rows (BLAS syrk), two products
# with 1 and Y, and scalings: no copy. A round with a clipped row (factors
# differ) or a factor outside [2^-450, 2^450] copies its unit rows
# (np.asarray) and sums the copy as before. Either way the leaf is a function
# of the round's rows alone and both compute the same exact sums, so a
# replaced row changes one round's leaf only.
#
# Its float error is inside the bound the sensitivity already carries
# (:func:`._ftl_float.float_leaf_sensitivity`, with rows_per_leaf = b, radius
# 1): u = 2^-53, gamma_n = n u / (1 - n u); any summation order (Higham §3.1).
# * Rows. The unit rows are the exact values f x_i (never rounded: no copy).
#   A kept row passed fl(fl(||x||^2) fl(f^2)) <= 1 (unit_rows), so ||f x||^2
#   <= (1 + d 2^-1075 f^2) / ((1 - gamma_d)(1 - u)^2) <= rho (f^2 <= 2^900);
#   a clipped row has f = fl(1 / sqrt(fl(||x||^2))) with fl(||x||^2) > 2^-900,
#   so ||f x||^2 <= (1 + gamma_2)^2 / (1 - gamma_d - d 2^-175) <= rho. These
#   are the rows whose exact sums have sensitivity <= rho joint(R).
# * Sums. A V coordinate is fl(S * C), S = the m-term sum of x_j x_k
#   (|S - exact| <= gamma_m sum |x_j x_k| + m 2^-1075 for products that
#   underflow), C = fl(fl(f f) / V_scale) (two roundings), then pack's
#   multiplication by fl(sqrt 2) (two): at most gamma_(m+5) times
#   sum_i |v_ij v_ik| / V_scale, plus m 2^-1075 f^2 <= m 2^-175 per
#   coordinate. The constant column's row: fl(sum x_j) times fl(f a / V_scale)
#   (f a exact: a is a power of two and f >= 2^-450), then pack: gamma_(m+4)
#   of sum |v_j a| / V_scale; its diagonal m a^2 / V_scale rounds once, as
#   the copied path's. The u block: fl(sum y x_j) (y in {-1, 0, 1}: exact
#   products) times fl(f / u_scale): gamma_(m+2) of sum |v_j y| / u_scale;
#   its constant row (sum y) a / u_scale, one rounding, as the copied path's.
#   m <= b, so every coordinate errs by at most gamma_(2b+8) times the sum of
#   its products' magnitudes plus an underflow term under b 2^-175: the
#   E of float_leaf_sensitivity (its L2 sum over the leaf, sum_i ||v_i||^2
#   <= b rho R^2, and its underflow term b (k + 2)^2 2^-170).
# So self.sensitivity = rho joint(R) + 2 E bounds the uncopied leaves as it
# does the copied ones, and the sensitivity is unchanged
# (tests/online/test_lsq.py checks uncopied leaves against exact sums).
_FACTOR_LIMIT = 2.0**450  # f^2 within 2^+-900: the underflow terms above hold


def _uncopied_leaf(ls, rows, Y):
    """The leaf of ``ls`` from uncopied unit ``rows`` (``rows.X`` the
    caller's, ``rows.factor`` per row, ``rows.const`` the constant column)
    and coded labels ``Y`` (m, k), or None when the round's rows must be
    copied (a clipped row, a factor out of range; the notes above)."""
    f = rows.factor
    c = ls.intercept
    if f.shape[0] == 0 or (rows.const is None) != (c is None):
        return None
    f0 = float(f[0])
    if not (1.0 / _FACTOR_LIMIT <= f0 <= _FACTOR_LIMIT) or not (f == f0).all():
        return None
    X = rows.X
    m, d = X.shape
    n, k = ls.n_features, Y.shape[1]
    # V's upper triangle only (what pack_symmetric reads): BLAS syrk of the
    # caller's rows, called directly (numpy's X.T @ X is syrk too, plus a copy
    # of the triangle onto the other: ~10 % slower at d = 54)
    if X.flags.c_contiguous:
        G = _syrk(1.0, X.T, trans=0)  # X.T is Fortran-ordered: no copy
    elif X.flags.f_contiguous:
        G = _syrk(1.0, X, trans=1)
    else:
        G = X.T @ X
    V = np.zeros((n, n))  # the lower triangle is never read
    np.multiply(G, f0 * f0 / ls.V_scale, out=V[:d, :d])
    u = np.empty((n, k))
    if k == 1:  # a gemv (Y's one column)
        np.multiply(Y[:, 0] @ X, f0 / ls.u_scale, out=u[:d, 0])
    else:
        np.multiply((Y.T @ X).T, f0 / ls.u_scale, out=u[:d])
    if c is not None:
        a = rows.const * c  # the constant column's value in the sums
        V[:d, d] = (np.ones(m) @ X) * (f0 * a / ls.V_scale)
        V[d, d] = m * a * a / ls.V_scale  # as the copied path: exact, then one rounding
        u[d] = Y.sum(axis=0) * a / ls.u_scale
    return np.concatenate([pack_symmetric(V), u.ravel()])


class PrivateLeastSquaresClassifier(ReplacedState, RoundBuffer):
    """Continual release of least-squares classifiers from private prefix sums.

    Each round of ``batch_size`` rows adds the leaf [pack(V_r) / s_V, vec(U_r) / s_u]
    (the round's Gram and label cross term) to one prefix-sum mechanism; the
    published model after a round is solved from the released sums with a
    ridge set from the public noise level (:func:`noise_level_ridge`).

    Parameters
    ----------
    n_features : int
        Width of the model: unit-space columns, plus one with ``intercept``.
    n_outputs : int
        1 for two classes (labels +-1), else the number of classes (labels
        are class indices 0..k-1, coded one-hot).
    alpha : float
        Per-row ridge added to the noise-level ridge (unit space).
    batch_size : int
        Rows per round (a leaf); rows of an incomplete round wait.
    horizon : int or None
        Rounds planned (None: unbounded).
    noise : NoiseSpec
        The prefix sums' noise (multiplier in units of the leaf sensitivity).
    rng : numpy.random.Generator
    intercept : bool, default=True
        The last column of the rows given is the constant column 1 (scaled
        to ``INTERCEPT`` inside the sums, and back in the model).
    mechanism : {"tree", "blt"}, default="tree"
    """

    def __init__(self, *, n_features, n_outputs, alpha, batch_size, horizon, noise, rng,
                 intercept=True, mechanism="tree"):
        super().__init__(n_features=n_features, n_outputs=n_outputs, batch_size=batch_size,
                         horizon=horizon)
        self.alpha = float(alpha)
        self.intercept = INTERCEPT if intercept else None
        c = self.intercept or 0.0
        self.row_bound = math.hypot(1.0, c)  # R: unit rows of norm <= 1, plus c
        self.V_scale, self.u_scale = default_scales(self.row_bound, _LABEL_NORM)
        k = self.n_outputs
        self._k = packed_dim(self.n_features)
        exact = joint_sensitivity(self.row_bound, _LABEL_NORM, self.V_scale, self.u_scale)
        # float64 sums: raised by their worst-case rounding error (module notes)
        self.sensitivity = float_leaf_sensitivity(
            exact, rows_per_leaf=self.batch_size,
            n_raw_features=self.n_features - (intercept is True), radius=1.0,
            row_bound=self.row_bound, label_bound=_LABEL_NORM, V_scale=self.V_scale,
            u_scale=self.u_scale, n_features=self.n_features + k)
        # a leaf's coordinates: sums over b rows of v_i v_j / s_V (sqrt(2) v_i v_j
        # off the diagonal, still <= R^2) and v_i y_l / s_u (<= R M)
        leaf_bound = self.batch_size * max(self.row_bound**2 / self.V_scale,
                                           self.row_bound * _LABEL_NORM / self.u_scale)
        self._tree = prefix_sum_mechanism(
            mechanism, dim=self._k + self.n_features * k, sensitivity=self.sensitivity,
            noise=noise, horizon=horizon, rng=rng, leaf_bound=leaf_bound)
        self._model = np.zeros((k, self.n_features))

    # ----------------------------------------------------------- rounds
    def _coded(self, y):
        """The label matrix (b, k): +-1 in one column, or one-hot {0, 1}^k."""
        y = np.asarray(y, dtype=np.float64)
        if self.n_outputs == 1:
            return y[:, None]
        return (y[:, None] == np.arange(self.n_outputs)).astype(np.float64)

    def leaf(self, X, y):
        """The leaf of one round's unit rows ``X`` (with an intercept, the
        last column is the constant 1) and encoded labels ``y``.

        ``X`` uncopied (:class:`~skdpol.linear_model._rows.UnitRows`, the
        caller's rows and a factor per row): summed from the caller's rows
        when every row of the round has the same factor (:func:`_uncopied_leaf`),
        else from a copy of the round's unit rows, as an array.

        Written with ``@`` products so that a sparse ``X`` would give the same
        sums (its d x d Gram made dense)."""
        if hasattr(X, "factor"):
            leaf = _uncopied_leaf(self, X, self._coded(y))
            if leaf is not None:
                return leaf
            X = np.asarray(X)  # a clipped row (or a factor out of range): a copy
        G = X.T @ X
        G = G.toarray() if hasattr(G, "toarray") else np.array(G)
        U = np.array(X.T @ self._coded(y))
        c = self.intercept
        if c is not None:  # the constant column times c, in the sums (no copy of X):
            G[-1, :] *= c  # exact, c a power of two (the same sums as rows whose
            G[:, -1] *= c  # constant is c, so the rounding bound is unchanged)
            U[-1, :] *= c
        return np.concatenate([pack_symmetric(G / self.V_scale),
                               (U / self.u_scale).ravel()])

    def _round(self, X, y):
        # one leaf through ``add`` (as FTAL and the momentum stream): the same
        # sums as add_leaves of one row, a frame less deep on the BLT
        self._tree.add(self.leaf(X, y), 1)

    def _publish(self):
        self._model = self.solve(self._tree.release(), self.n_rows_used,
                                 float(self._tree.noise_std_at(self.n_rounds)[0]))

    @property
    def published(self):
        """The current public model (k, d) on rows whose constant column is 1."""
        return self._model

    def solve(self, z, n_rows, noise_std):
        """The published model of released leaf sums ``z`` after ``n_rows`` rows,
        whose per-coordinate noise std is ``noise_std`` (post-processing)."""
        d, k = self.n_features, self.n_outputs
        V = unpack_symmetric(z[:self._k], d) * self.V_scale
        U = z[self._k:].reshape(d, k) * self.u_scale
        W = noise_level_ridge(V, U, n_rows, noise_std * self.V_scale, self.alpha).T
        if self.intercept is not None:
            W[:, -1] *= self.intercept  # the same model on rows whose constant is 1
        # the logistic scale of the quadratic surrogate (module notes)
        return W * (LOGIT_SCALE if k == 1 else LOGIT_SCALE * k / 2.0)

    # ----------------------------------------------------------- accounting
    def check_room(self, n_rows):
        super().check_room(n_rows)
        self._tree.check_room((self._pending_X.shape[0] + n_rows) // self.batch_size)

    def event(self, n_rounds=None):
        """Cost of every release once ``n_rounds`` rounds are complete (default: now)."""
        return self._tree.event(self.n_rounds if n_rounds is None else n_rounds)
