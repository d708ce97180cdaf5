"""Prototype: second-order (sufficient-statistic) regressor streams with label noise
on the residual scale, against ``fit`` at epsilon 0.5 (issue 31's first bar).

Same protocol as ``bench_stream.py`` (its loaders, splits and public schemas):
one pass in chunks of 1,000 rows, a model published after every chunk, one
budget (epsilon, delta = 1e-6) for every release; the final model is scored on
the test rows. References in the same run: ``fit`` at epsilon 1 and 0.5 and
``partial_fit`` with ``algorithm="ftrl-momentum"`` (the package's stream) at
epsilon 1 and inf.

Unit space (public)
-------------------
v = [clip(x / data_norm, norm 1), C] with C = 0.5 (the package's streams'
constant column), so ||v|| <= R = sqrt(1 + C^2); unit labels
u = clip((y - offset) / y_bound, -1, 1) (offset: the public range's middle).

Candidates
----------
(a) ``resid``: residual sufficient statistics with a public reference. Chunk s
    (rows i in s) is one leaf [pack(G_s) / s_V, h_s / s_u] with
    G_s = sum v_i v_i^T and h_s = sum v_i r_i,
    r_i = clip(u_i - v_i.w_(s-1), -tau, tau), w_(s-1) the model published after
    chunk s - 1 (w_0 = 0, or the private mean's intercept-only model in
    ``resid+mean``). Released: prefix sums G~_t, H~_t (one BLT stream, horizon
    = chunks). Model at release t (post-processing of released sums and of the
    published models only):
        b_t = H~_t + sum_(s<=t) (G~_s - G~_(s-1)) w_(s-1)    (the X^T u estimate)
        w_t = (G~_t,+ + lam_t I)^-1 (b_t + lam_t c_t),
    G~_t,+ the released Gram with its eigenvalues clipped at 0,
    lam_t = k sqrt(2 d) sigma_V(t) (AdaSSP-like, Wang 2018: the spectral norm
    of the release's Gram noise, public) and c_t = 0 or, with ``prox``, the
    previous model.
(b) ``centred``: labels centred on a privately released mean, then plain SS
    with fixed labels l_i = clip(u_i - m~, -M, M) (not adaptive).
    m~ = (sum of the first chunk's u + N(0, (2 / mu_m)^2)) / 1,000 (the first
    chunk's size is public). The intercept absorbs m~.
(c) ``hybrid``: a first-order iterate plus a second-order release. The
    first-order stream is the package's ftrl-momentum re-implemented in numpy
    (Huber at tau = 0.125, rounds of 100 rows (50 under 10,000 rows), step
    b / (D R^2) with D = 50 x ``noise_step_scale``, momentum 0.95, polynomial
    averaging with tail 0.6, one BLT over the rounds, leaf sensitivity
    2 tau R) at GDP share 1 - f; its released gradient prefix sum is
    -H~_t = -sum v_i r_i(w_round(i)), the residual sums at each row's round
    iterate. A second BLT (horizon = chunks, share f) releases the Gram
    prefix sums G~_t (Gram-only leaves, sensitivity sqrt(2) R^2). At each
    chunk the published model is a Newton correction of the averaged
    iterate a_t:
        w_t = a_t + (G~_t,+ + lam_t I)^-1 (H~_t + sum_s dG~_s (wbar_s - a_t)),
    wbar_s the mean iterate over chunk s's rounds (the stale references,
    approximated per chunk: post-processing either way). f = 0 with no
    correction is the numpy first-order stream alone (a check that the
    re-implementation matches the package's).
(d) ``centred rows`` (not second order; found on the way): one Gaussian
    release, at GDP share f = 0.05, of the first chunk's sums [sum v, sum u];
    every row is then centred on the released mean of v and clipped at norm
    B (public; 0.7 of the unit ball), with the constant column c = 0.25, so
    rows have norm <= R_B = hypot(B, c) (0.74 instead of 1.12). The
    first-order stream of (c) runs on these rows with leaf sensitivity
    2 tau R_B and (option) today's step b / (D R^2), R = hypot(1, 0.5): the
    same step, 1.5x less noise. It starts at the intercept-only model of the
    released label mean. Published model: the same linear model on [v, C]
    (test rows are centred, not clipped). (b+d): the SS stream (b) on such
    rows (B = 0.4), its label mean taken from the same release.

Sensitivity (replace-one; one row (v, u) -> (v', u'))
-----------------------------------------------------
Only the leaf of the replaced row's chunk changes (the chunk positions are
public). Given the public reference w_(s-1), the row's residual r is a
function of its own (v, u) and |r|, |r'| <= tau, so
* ||v v^T - v' v'^T||_F^2 = ||v||^4 + ||v'||^4 - 2 (v.v')^2,
* ||v r - v' r'||^2 <= tau^2 (||v||^2 + ||v'||^2 + 2 |v.v'|),
which are PQFTL's two bounds with the label bound M = tau (skdpol/online/_ftl.py);
the leaf moves by at most ``joint_sensitivity(R, tau, s_V, s_u)`` with the
balanced scales ``default_scales(R, tau)`` (= sqrt(9/8) ~ 1.061). The same
with M for (b) (|l| <= M). The mean's sum of clipped labels: 2 (|u| <= 1).
(d): the first chunk's [sum v, sum u] moves by <= sqrt(2^2 + 2^2) = 2 sqrt(2)
(||v|| <= 1, |u| <= 1); once released the centring is public, so a row's
centred and clipped version is a function of that row alone, of norm <= R_B:
the first-order leaf (a round's sum of Huber gradients at the current
iterate, each of norm <= tau R_B) moves by <= 2 tau R_B.
The reference is adaptive (it is a function of earlier releases); the BLT
stream with multiplier m is one Gaussian mechanism of multiplier m over all
its leaves, adaptively chosen ones included (skdpol/mechanisms/_blt.py notes;
Denisov et al. 2022, Thm 2.1).

Calibration
-----------
``--calibration zcdp`` (default): the package's accounting of its discrete
sampler, mu = sqrt(2 rho), rho = ``zcdp_rho_for_budget(epsilon, 1e-6)``
(dp-accounting's RDP conversion: multiplier 4.53 at (1, 1e-6)).
``--calibration gaussian``: mu = ``gaussian_mu_for_budget(epsilon, 1e-6)``
(dp-accounting's exact Gaussian: mu = 0.2367, multiplier 4.22). One piece:
the stream's multiplier is 1 / mu. Several pieces: Gaussian mechanisms
compose as mu^2 = sum mu_i^2 (GDP, exact for Gaussians; zCDP's rho = mu^2 / 2
adds alike), so a piece of public share f gets mu_i = sqrt(f) mu;
``accounting_check`` composes the pieces' events in dp-accounting (PLD of
Gaussian events, or RDP of zCDP events) and reports the epsilon (<= the
target). Prototype: the float sampler and float64 sums (at the zCDP
multiplier when so calibrated); a package version needs the discrete
sampler and the float-leaf inflation of skdpol/online/_ftl_float.py.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/proto_resid_ss.py \
        --seeds 20 --full --out /tmp/rs.md                    # seeds 0-19
    ... --seeds 20 --full --first-seed 100 --out /tmp/rs100.md  # fresh splits
    ... --seeds 20 --full --calibration gaussian --out /tmp/rsg.md
    ... --seeds 20 --validate --out /tmp/rsv.md               # (d) on validation rows
"""

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

from _common import machine_lines

import dp_accounting
import numpy as np
from sklearn.metrics import r2_score

from bench_stream import _one_pass, _private
from proto_streams import DELTA, chunks, load_tables, split
from skdpol.accounting import gaussian_mu_for_budget, zcdp_rho_for_budget
from skdpol.datasets import data_home
from skdpol.mechanisms import (BLTPrefixSum, exponential_mechanism, pack_symmetric, packed_dim,
                               quantile_distances, target_rank, unpack_symmetric)
from skdpol.online import default_scales, joint_sensitivity
from skdpol.online._step_noise import noise_step_scale

C = 0.5  # the constant column (public)
R = math.hypot(1.0, C)
TABLES = {"kc": "King County, log price (R^2)", "wine": "wine quality (R^2)"}


# ------------------------------------------------------------------ unit space
def unit_rows(table, X):
    V = X / table["data_norm"]
    V = V / np.maximum(np.linalg.norm(V, axis=1), 1.0)[:, None]
    return np.hstack([V, np.full((V.shape[0], 1), C)])


def unit_labels(table, y):
    return np.clip((y - table["offset"]) / table["y_bound"], -1.0, 1.0)


def r2(table, theta, Xte, yte):
    """Test R^2 of a unit-space model (d + 1,) or of a predictor of unit
    labels from unit rows."""
    A = unit_rows(table, Xte)
    s = theta(A) if callable(theta) else A @ theta
    return r2_score(yte, s * table["y_bound"] + table["offset"])


# ------------------------------------------------------------------ mechanisms
CALIBRATION = "gaussian"  # or "zcdp": the package's discrete-sampler accounting


def mu_total(eps):
    """mu of the whole budget: exact Gaussian (dp-accounting), or with
    CALIBRATION = "zcdp" sqrt(2 rho), rho = ``zcdp_rho_for_budget`` (the
    package's accounting of its discrete sampler: 7 % more noise at (1, 1e-6)).
    Either composes additively in mu^2 (GDP; zCDP's rho = mu^2 / 2)."""
    if math.isinf(eps):
        return math.inf
    if CALIBRATION == "zcdp":
        return math.sqrt(2.0 * zcdp_rho_for_budget(eps, DELTA))
    return gaussian_mu_for_budget(eps, DELTA)


def mult(mu):
    """Noise multiplier of one Gaussian mechanism at GDP parameter mu."""
    return 0.0 if math.isinf(mu) else 1.0 / mu


def accounting_check(eps, shares):
    """epsilon at DELTA of the pieces of a candidate (shares of mu^2, sum 1):
    Gaussian events of multiplier 1 / (sqrt(f) mu) composed by dp-accounting's
    PLD accountant ("gaussian"), or zCDP events of rho f mu^2 / 2 composed by
    its RDP accountant ("zcdp", as the package accounts its discrete sampler)."""
    mu = mu_total(eps)
    if CALIBRATION == "zcdp":
        acc = dp_accounting.rdp.RdpAccountant()
        for f in shares:
            acc.compose(dp_accounting.ZCDpEvent(rho=f * mu**2 / 2.0))
        return acc.get_epsilon(DELTA)
    acc = dp_accounting.pld.PLDAccountant()
    for f in shares:
        if f > 0:
            acc.compose(dp_accounting.GaussianDpEvent(1.0 / (math.sqrt(f) * mu)))
    return acc.get_epsilon(DELTA)


class SSStream:
    """Prefix sums of leaves [pack(G_s) / s_V, h_s / s_u] through one BLT
    stream (float sampler); per-row |label or residual| <= M, ||v|| <= R."""

    def __init__(self, d, M, T, m, rng, row_bound=R):
        self.d, self.k = d, packed_dim(d)
        self.s_V, self.s_u = default_scales(row_bound, M)
        self.sens = joint_sensitivity(row_bound, M, self.s_V, self.s_u)
        self.blt = BLTPrefixSum(dim=self.k + d, sensitivity=self.sens, noise_multiplier=m,
                                horizon=max(T, 1), rng=rng, sampler="float")
        self.t = 0

    def add(self, G, h):
        self.blt.add(np.concatenate([pack_symmetric(G) / self.s_V, h / self.s_u]))
        self.t += 1

    def release(self):
        """(G~_t, H~_t, std of G~ entries): released sums and a public number."""
        z = self.blt.release()
        std = float(self.blt.noise_std_at(self.t)[0])
        return unpack_symmetric(z[:self.k], self.d) * self.s_V, z[self.k:] * self.s_u, \
            std * self.s_V


def ada_solve(G, b, sV, n, k, centre=None):
    """(G_+ + lam I)^-1 (b + lam centre), lam = k sqrt(2d) sV + 1e-6 n."""
    d = len(b)
    lam_ev, Q = np.linalg.eigh(G)
    lam = k * math.sqrt(2 * d) * sV + 1e-6 * n
    if centre is not None:
        b = b + lam * centre
    return Q @ ((Q.T @ b) / (np.maximum(lam_ev, 0.0) + lam))


def private_mean(u, mu, rng):
    """Mean of the first chunk's unit labels (|u| <= 1: the sum moves by <= 2)."""
    first = u[:chunks(len(u))[0][1]]
    noise = 0.0 if math.isinf(mu) else rng.normal(0.0, 2.0 / mu)
    return float(np.clip((first.sum() + noise) / len(first), -1.0, 1.0))


# ------------------------------------------------------------------ candidates
def resid_ss(A, u, eps, rng, *, tau=0.125, k=0.3, prox=False, mean_share=0.0):
    """(a): residual SS with the published model as reference (module notes);
    ``mean_share`` > 0: the first reference is the intercept-only model of a
    privately released mean (GDP share f of mu; the stream gets 1 - f)."""
    n, d = A.shape
    mu = mu_total(eps)
    w = np.zeros(d)
    if mean_share > 0:
        w[-1] = private_mean(u, math.sqrt(mean_share) * mu, rng) / C
    cs = chunks(n)
    st = SSStream(d, tau, len(cs), mult(math.sqrt(1.0 - mean_share) * mu), rng)
    prevG, S = np.zeros((d, d)), np.zeros(d)
    for lo, hi in cs:
        B = A[lo:hi]
        r = np.clip(u[lo:hi] - B @ w, -tau, tau)
        st.add(B.T @ B, r @ B)
        G, H, sV = st.release()
        S += (G - prevG) @ w  # sum_s dG~_s w_(s-1): post-processing
        prevG = G
        w = ada_solve(G, H + S, sV, hi, k, centre=w if prox else None)
    return w


def centred_ss(A, u, eps, rng, *, M=0.5, k=0.3, mean_share=0.05, mu=None, row_bound=R,
               constant=C, label_mean=None):
    """(b): labels centred on a private mean, clipped at M; plain SS stream
    (``label_mean``: an already released mean, and ``mean_share`` = 0)."""
    n, d = A.shape
    mu = mu_total(eps) if mu is None else mu
    m = private_mean(u, math.sqrt(mean_share) * mu, rng) if label_mean is None else label_mean
    ell = np.clip(u - m, -M, M)
    cs = chunks(n)
    st = SSStream(d, M, len(cs), mult(math.sqrt(1.0 - mean_share) * mu), rng, row_bound)
    for lo, hi in cs:
        B = A[lo:hi]
        st.add(B.T @ B, ell[lo:hi] @ B)
        G, H, sV = st.release()
        w = ada_solve(G, H, sV, hi, k)
    w = w.copy()
    w[-1] += m / constant  # the intercept absorbs the centring
    return w


def hybrid(A, u, eps, rng, *, f=0.25, k=1.0, stale=True, tau=0.125, mu=None, row_bound=R,
           theta0=None, step_row_bound=None):
    """(c): the first-order iterate plus a Newton correction from a released
    Gram (module notes); ``f`` = 0: the first-order stream alone."""
    n, d = A.shape
    mu = mu_total(eps) if mu is None else mu
    R = row_bound  # noqa: N806  (rows of norm <= R)
    b = 100 if n >= 10_000 else 50
    rounds = chunks(n, b)
    L = tau * R
    grad = BLTPrefixSum(dim=d, sensitivity=2 * L, noise_multiplier=mult(math.sqrt(1 - f) * mu),
                        horizon=len(rounds), rng=rng, sampler="float")
    ratio = float(grad.noise_std_at(len(rounds))[0]) / (2 * L)
    Rs = R if step_row_bound is None else step_row_bound  # noqa: N806
    lr = b / (50.0 * noise_step_scale(d, ratio, n, len(rounds)) * Rs**2)
    cs = chunks(n)
    if f > 0:
        gram = BLTPrefixSum(dim=packed_dim(d), sensitivity=math.sqrt(2) * R**2,
                            noise_multiplier=mult(math.sqrt(f) * mu), horizon=len(cs),
                            rng=rng, sampler="float")
    theta = np.zeros(d) if theta0 is None else np.array(theta0, dtype=float)
    vel, avg, last = np.zeros(d), theta.copy(), np.zeros(d)
    refs, prevG, w = [], np.zeros((d, d)), np.zeros(d)
    ref_sum, ref_rows = np.zeros(d), 0
    chunk_ends = {hi for _, hi in cs}
    for t, (lo, hi) in enumerate(rounds):
        B = A[lo:hi]
        r = np.clip(u[lo:hi] - B @ theta, -tau, tau)
        ref_sum += (hi - lo) * theta
        ref_rows += hi - lo
        grad.add(-(r @ B))
        released = grad.release()
        vel = 0.95 * vel + (released - last) / (hi - lo)
        last = released
        theta = theta - lr * vel
        rho = min(1.0, 1.0 / (0.6 * (t + 1)))
        avg = (1 - rho) * avg + rho * theta
        if hi not in chunk_ends:
            continue
        w = avg
        if f > 0:  # the chunk's Gram: one leaf of the second stream
            c0 = max(c for c, _ in cs if c < hi)
            Bc = A[c0:hi]
            gram.add(pack_symmetric(Bc.T @ Bc))
            G = unpack_symmetric(gram.release(), d)
            sV = float(gram.noise_std_at(len(refs) + 1)[0]) * math.sqrt(2) * R**2
            refs.append((G - prevG, ref_sum / ref_rows))
            prevG = G
            g = -released  # H~_t
            if stale:
                g = g + sum(dG @ (wbar - avg) for dG, wbar in refs)
            w = avg + ada_solve(G, g, sV, hi, k)
        ref_sum, ref_rows = np.zeros(d), 0
    return w


QUANTILE_EDGES = np.linspace(0.0, 2.0, 81)  # public grid of centred norms (<= 2)


def private_norm_quantile(norms, q, mu, share, rng):
    """Upper edge of the grid cell the exponential mechanism picks for the
    q-quantile of ``norms`` (skdpol.mechanisms' exact sampler; sensitivity 1
    in rank distance). At zCDP share f of mu^2 / 2 its epsilon is
    sqrt(8 rho_q) = 2 sqrt(f) mu (epsilon-bounded range: rho = epsilon^2 / 8;
    skdpol/mechanisms/_quantile.py). Only with the zcdp calibration."""
    values = np.sort(np.clip(norms, QUANTILE_EDGES[0], QUANTILE_EDGES[-1]))
    d = quantile_distances(values, QUANTILE_EDGES, target_rank(q, len(values)))
    if math.isinf(mu):
        k = int(np.argmin(d))
    else:
        k = exponential_mechanism(d, 2.0 * math.sqrt(share) * mu, rng)
    return float(QUANTILE_EDGES[k + 1])


def centred_rows(A, u, eps, rng, *, share=0.05, bound=0.5, constant=0.25, quantile=None):
    """``quantile`` = (q, share_q, scale): the bound is ``scale`` times a
    private q-quantile of the first chunk's centred norms (after the mean;
    share_q of the budget, zcdp calibration only) instead of ``bound``."""
    """(d): rows centred on a private mean of the first chunk's rows and
    clipped at norm ``bound`` (public), constant column ``constant``.

    One Gaussian release of the first chunk's sums [sum v, sum u] (its size
    is public): ||v|| <= 1 and |u| <= 1, so replacing one row moves the pair
    by at most sqrt(2^2 + 2^2) = 2 sqrt(2) (L2); noise std 2 sqrt(2) / mu_m
    per coordinate at GDP share ``share`` (mu_m = sqrt(share) mu). Once
    released the centring is public (post-processing), so a row's centred and
    clipped version is a function of that row alone and every stream keeps
    its replace-one sensitivity with R = hypot(bound, constant).
    Returns (train transform, mean of v, mean of u, mu left, R).
    """
    mu = mu_total(eps)
    V = A[:, :-1]
    m = chunks(len(V))[0][1]
    left = 1.0 - share
    total = np.concatenate([V[:m].sum(axis=0), [u[:m].sum()]])
    if not math.isinf(mu):
        total = total + rng.normal(0.0, 2.0 * math.sqrt(2.0) / (math.sqrt(share) * mu),
                                   total.size)
    mean_v, mean_u = total[:-1] / m, float(np.clip(total[-1] / m, -1.0, 1.0))
    if quantile is not None:
        if CALIBRATION != "zcdp":
            raise ValueError("a private quantile composes by zCDP only")
        q, share_q, scale = quantile
        bound = scale * private_norm_quantile(np.linalg.norm(V[:m] - mean_v, axis=1), q, mu,
                                              share_q, rng)
        left -= share_q

    def transform(Vany):
        W = Vany - mean_v
        W = W / np.maximum(np.linalg.norm(W, axis=1) / bound, 1.0)[:, None]
        return np.hstack([W, np.full((len(W), 1), constant)])
    return transform, mean_v, mean_u, math.sqrt(left) * mu, math.hypot(bound, constant)


def on_centred(kind, *, share=0.05, bound=0.5, constant=0.25, init=True, quantile=None, **kw):
    # kw: the stream's own options (hybrid's step_row_bound, centred_ss's M, k, ...)
    """(d) feeding a stream (``kind`` "first-order": ``hybrid`` with f = 0,
    started at the intercept-only model of the private label mean when
    ``init``; "ss": ``centred_ss``). Returns (A, u, eps, rng) -> the model on
    the standard unit rows [v, C] (d + 1,): a linear model (test rows are
    centred, not clipped: the clipping is a training device)."""
    def run(A, u, eps, rng):
        transform, mean_v, mean_u, mu, rb = centred_rows(
            A, u, eps, rng, share=share, bound=bound, constant=constant, quantile=quantile)
        B = transform(A[:, :-1])
        if kind == "first-order":
            theta0 = np.zeros(B.shape[1])
            if init:
                theta0[-1] = mean_u / constant
            theta = hybrid(B, u, eps, rng, f=0.0, mu=mu, row_bound=rb, theta0=theta0, **kw)
        else:
            theta = centred_ss(B, u, eps, rng, mu=mu, row_bound=rb, constant=constant,
                               mean_share=0.0, label_mean=mean_u, **kw)
        # (v - mean_v).theta_v + constant theta_c  ==  [v, C] . w
        w = np.append(theta[:-1], (constant * theta[-1] - mean_v @ theta[:-1]) / C)
        return w
    return run


def gram_ceiling(A, u, eps, rng, *, k=0.3, releases=1, oracle=None):
    """Diagnostic, not private: noise on the Gram only (the whole budget, the
    Gram's own sensitivity sqrt(2) R^2), the exact X^T u, the same solve;
    ``releases`` > 1 scales the noise by the BLT's factor at that horizon.
    Any SS stream of this Gram pays at least this noise."""
    n, d = A.shape
    G, h = A.T @ A, A.T @ u
    if math.isinf(eps):
        return ada_solve(G, h, 0.0, n, k)
    factor = 1.0
    if releases > 1:
        blt = BLTPrefixSum(dim=1, sensitivity=1.0, noise_multiplier=1.0, horizon=releases,
                           rng=np.random.default_rng(0), sampler="float")
        factor = float(blt.noise_std_at(releases)[0])
    sV = factor * mult(mu_total(eps)) * math.sqrt(2.0) * R**2
    # as the released Gram: std sV on the diagonal, sV / sqrt(2) off it
    # (pack_symmetric keeps the Frobenius norm: off-diagonal entries x sqrt(2))
    z = rng.standard_normal(packed_dim(d)) * sV
    E = unpack_symmetric(z, d)
    if oracle is not None:
        return max(r2(*oracle[:1], ada_solve(G + E, h, sV, n, kk), *oracle[1:])
                   for kk in (0.1, 0.2, 0.3, 0.5, 1.0, 2.0))
    return ada_solve(G + E, h, sV, n, k)


def candidates(full):
    """name -> (function of (A, u, eps, rng), GDP shares for the accounting check)."""
    out = {
        "(a) resid tau=.125 k=.3": (lambda A, u, e, g: resid_ss(A, u, e, g), [1.0]),
        "(a) resid tau=.125 k=1": (lambda A, u, e, g: resid_ss(A, u, e, g, k=1.0), [1.0]),
        "(a) resid tau=.25 k=.3": (lambda A, u, e, g: resid_ss(A, u, e, g, tau=0.25), [1.0]),
        "(a) resid tau=.125 k=.3 prox": (lambda A, u, e, g: resid_ss(A, u, e, g, prox=True),
                                         [1.0]),
        "(a+b) resid+mean(5%) tau=.125 k=.3":
            (lambda A, u, e, g: resid_ss(A, u, e, g, mean_share=0.05), [0.05, 0.95]),
        "(a+b) resid+mean(5%) tau=.125 k=1":
            (lambda A, u, e, g: resid_ss(A, u, e, g, k=1.0, mean_share=0.05), [0.05, 0.95]),
        "(b) centred(5%) M=.5 k=.3": (lambda A, u, e, g: centred_ss(A, u, e, g), [0.05, 0.95]),
        "(b) centred(5%) M=.25 k=.3":
            (lambda A, u, e, g: centred_ss(A, u, e, g, M=0.25), [0.05, 0.95]),
    }
    out.update({
        "(d) centred rows B=.7 c=.25 (5%), first-order, today's step":
            (on_centred("first-order", bound=0.7, constant=0.25, step_row_bound=R), [0.05, 0.95]),
        "(d) centred rows B=.5 c=.25 (5%), first-order, today's step":
            (on_centred("first-order", bound=0.5, constant=0.25, step_row_bound=R), [0.05, 0.95]),
        "(d) centred rows B=.7 c=.25 (5%), first-order, step rule of the new R":
            (on_centred("first-order", bound=0.7, constant=0.25), [0.05, 0.95]),
        **({"(d) centred rows, B = private q99 (2%), c=.25 (5%), first-order, today's step":
            (on_centred("first-order", constant=0.25, step_row_bound=R,
                        quantile=(0.99, 0.02, 1.0)), [0.05, 0.02, 0.93]),
            "(d) centred rows, B = 2 x private median (2%), c=.25 (5%), first-order, "
            "today's step":
            (on_centred("first-order", constant=0.25, step_row_bound=R,
                        quantile=(0.5, 0.02, 2.0)), [0.05, 0.02, 0.93]),
            } if CALIBRATION == "zcdp" else {}),
        "(b+d) centred rows B=.4 c=.25 and labels (5%), SS M=.25 k=.3":
            (on_centred("ss", bound=0.4, constant=0.25, M=0.25, k=0.3), [0.05, 0.95]),
        "(c) numpy ftrl-momentum alone (check)":
            (lambda A, u, e, g: hybrid(A, u, e, g, f=0.0), [1.0]),
        "(c) hybrid Newton, f=.25 k=1": (lambda A, u, e, g: hybrid(A, u, e, g), [0.25, 0.75]),
        "(c) hybrid Newton, f=.25 k=3":
            (lambda A, u, e, g: hybrid(A, u, e, g, k=3.0), [0.25, 0.75]),
        "(c) hybrid Newton, f=.5 k=1":
            (lambda A, u, e, g: hybrid(A, u, e, g, f=0.5), [0.5, 0.5]),
    })
    if full:
        out.update({
            "(a+b) resid+mean(5%) tau=.25 k=.3":
                (lambda A, u, e, g: resid_ss(A, u, e, g, tau=0.25, mean_share=0.05),
                 [0.05, 0.95]),
            "(a+b) resid+mean(5%) tau=.125 k=.3 prox":
                (lambda A, u, e, g: resid_ss(A, u, e, g, prox=True, mean_share=0.05),
                 [0.05, 0.95]),
            "(b) centred(5%) M=.5 k=1":
                (lambda A, u, e, g: centred_ss(A, u, e, g, k=1.0), [0.05, 0.95]),
        })
    return out


# ------------------------------------------------------------------ run
def run_seed(name, table, seed, cands, rec):
    Xtr, ytr, Xte, yte = split(table, seed)
    n = Xtr.shape[0]
    A, u = unit_rows(table, Xtr), unit_labels(table, ytr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for eps in (1.0, 0.5):
            est = _private(table, n, eps, seed).fit(Xtr, ytr)
            rec("fit (auto = noisy-gd)", eps, r2_score(yte, est.predict(Xte)))
        for eps in (1.0, math.inf):
            est = _one_pass(_private(table, n, eps, seed, horizon=n, algorithm="ftrl-momentum"),
                            table, Xtr, ytr)
            rec("partial_fit one pass, ftrl-momentum", eps, r2_score(yte, est.predict(Xte)))
    for cname, (fn, _) in cands.items():
        for eps in (1.0, math.inf):
            theta = fn(A, u, eps, np.random.default_rng([seed, 1]))
            rec(cname, eps, r2(table, theta, Xte, yte))
    T = len(chunks(n))
    for releases, label in ((1, "one release"), (T, f"{T} releases")):
        theta = gram_ceiling(A, u, 1.0, np.random.default_rng([seed, 2]), releases=releases)
        rec(f"ceiling: Gram noise only, exact X^T u, {label} (not private)", 1.0,
            r2(table, theta, Xte, yte))
    rec("ceiling: the same, one release, best ridge picked on test (not private)", 1.0,
        gram_ceiling(A, u, 1.0, np.random.default_rng([seed, 2]),
                     oracle=(table, Xte, yte)))


def validate(tables, n_seeds):
    """(d)'s constants on validation rows: each seed's training split is cut
    80 / 20, the stream runs on the first part and is scored on the second
    (the test rows are never read). Markdown lines: per table, every
    configuration's validation median and its paired median gain over the
    first-order stream alone."""
    cfgs = {"first-order alone": lambda A, u, e, g: hybrid(A, u, e, g, f=0.0)}
    for B in (0.5, 0.6, 0.7, 0.8, 1.0):
        for today in (True, False):
            cfgs[f"B={B:g} c=0.25, {'today' if today else 'new R'}'s step"] = on_centred(
                "first-order", bound=B, constant=0.25, step_row_bound=R if today else None)
    cfgs["B=0.7 c=0.5, today's step"] = on_centred("first-order", bound=0.7, constant=0.5,
                                                   step_row_bound=R)
    lines = ["| table | configuration | validation R^2 (median) | paired gain over the "
             "first-order stream alone |", "|---|---|---|---|"]
    for name, table in tables.items():
        out = {key: [] for key in cfgs}
        for seed in range(n_seeds):
            Xtr, ytr, _, _ = split(table, seed)
            m = int(0.8 * len(Xtr))
            A, u = unit_rows(table, Xtr[:m]), unit_labels(table, ytr[:m])
            for key, fn in cfgs.items():
                theta = fn(A, u, 1.0, np.random.default_rng([seed, 1]))
                out[key].append(r2(table, theta, Xtr[m:], ytr[m:]))
        base = np.array(out["first-order alone"])
        for key in sorted(out, key=lambda k: -np.median(out[k])):
            lines.append(f"| {name} | {key} | {np.median(out[key]):.4f} | "
                         f"{np.median(np.array(out[key]) - base):+.4f} |")
    return lines


def cell(v):
    return f"{np.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]" if v else ""


def report(results, names, cands, args, seconds):
    lines = ["# Residual sufficient-statistic streams vs fit at epsilon 0.5 (issue 31)", "",
             f"Produced by `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python "
             f"benchmarks/proto_resid_ss.py {' '.join(sys.argv[1:])}` ({args.seeds} seeds, "
             f"{seconds / 60:.1f} min; prototypes' noise calibrated by {CALIBRATION}). "
             "Cells: median [min, max] of test R^2 over seeds "
             "(seed = the 80/20 split and the noise). One pass: chunks of 1,000 rows, a model "
             "after every chunk, one budget, delta = 1e-6.", "", *machine_lines(), ""]
    for name in names:
        rows = [r for r in results if r["table"] == name]
        methods = []
        for r in rows:
            if r["method"] not in methods:
                methods.append(r["method"])
        f05 = {r["seed"]: r["score"] for r in rows
               if r["method"].startswith("fit") and r["eps"] == 0.5}
        fit05 = np.median(list(f05.values()))
        lines += [f"## {TABLES[name]}", "",
                  "| method | eps = 1 | eps = inf or 0.5 | eps 1 median - fit@0.5 median | "
                  "seeds above fit@0.5 |", "|---|---|---|---|---|"]
        for mth in methods:
            one = [r["score"] for r in rows if r["method"] == mth and r["eps"] == 1.0]
            other = [(r["eps"], r["score"]) for r in rows if r["method"] == mth
                     and r["eps"] != 1.0]
            label = ""
            if other:
                e = other[0][0]
                label = ("eps=inf: " if math.isinf(e) else f"eps={e:g}: ") + cell(
                    [s for _, s in other])
            margin = f"{np.median(one) - fit05:+.3f}" if one else ""
            above = [r["score"] > f05[r["seed"]] for r in rows
                     if r["method"] == mth and r["eps"] == 1.0]
            count = f"{sum(above)} / {len(above)}" if above else ""
            lines.append(f"| {mth} | {cell(one)} | {label} | {margin} | {count} |")
        lines.append("")
    how = ("RDP accountant, zCDP events" if CALIBRATION == "zcdp"
           else "PLD accountant, Gaussian events")
    lines += [f"## Accounting check (dp-accounting {how}, delta = 1e-6)", "",
              "| candidate | GDP shares of mu(1, 1e-6) | epsilon composed |", "|---|---|---|"]
    for cname, (_, shares) in cands.items():
        lines.append(f"| {cname} | {', '.join(f'{s:g}' for s in shares)} | "
                     f"{accounting_check(1.0, shares):.4f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--first-seed", type=int, default=0,
                   help="seeds first-seed .. first-seed + seeds - 1 (fresh splits: 100, 200)")
    p.add_argument("--calibration", choices=("gaussian", "zcdp"), default="zcdp",
                   help="the prototypes' noise: the package's zCDP accounting of its "
                        "discrete sampler (default) or the exact Gaussian")
    p.add_argument("--tables", default="kc,wine")
    p.add_argument("--full", action="store_true", help="also the neighbours of the rows")
    p.add_argument("--validate", action="store_true",
                   help="only (d)'s constants on validation rows of seeds 0..seeds-1")
    p.add_argument("--out")
    args = p.parse_args()
    global CALIBRATION
    CALIBRATION = args.calibration
    names = args.tables.split(",")
    tables = load_tables(names, data_home())
    if args.validate:
        text = "\n".join(validate(tables, args.seeds))
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n")
        return
    cands = candidates(args.full)
    results = []
    t0 = time.perf_counter()
    for name in names:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            def rec(method, eps, value, name=name, seed=seed):
                results.append(dict(table=name, method=method, eps=eps, seed=seed,
                                    score=float(value)))
                print(f"{name} seed={seed} eps={eps:g} {method}: {value:.4f}", flush=True)
            run_seed(name, tables[name], seed, cands, rec)
    text = report(results, names, cands, args, time.perf_counter() - t0)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
