"""Prototype stream algorithms for issue 31: one pass of partial_fit vs fit.

One pass over each training table in chunks of 1,000 rows (horizon = the
number of training rows, a model published after every chunk: continual
release, one budget for all releases), epsilon in {1, inf}, delta = 1e-6.
Measured against skdpol's own ``partial_fit`` (defaults), skdpol's ``fit``
(epsilon 1 and 0.5) and one pass of scikit-learn's SGD.

Every candidate is a plain numpy function below. Privacy, in one place:

* Unit space as skdpol's: a row x becomes v = [clip(x / data_norm, norm 1), 1],
  so ||v|| <= R = sqrt(2); regression labels y -> (y - offset) / y_bound,
  clipped to [-1, 1]; classification labels -> +-1.
* Each chunk of 1,000 rows is one leaf of a prefix-sum stream released by
  skdpol's ``BLTPrefixSum`` (float sampler, horizon = number of chunks
  (or of releases with ``release_every``)). A replaced row changes exactly one
  leaf, by at most the leaf's replace-one L2 sensitivity Delta (written next
  to each candidate); the BLT stream with noise multiplier m (per-coordinate
  std m * Delta * sens(C) on its published y, decoded prefix sums carry
  m * Delta * sens(C) * max_error(t)) is ONE Gaussian mechanism of multiplier m
  for all releases together, adaptively chosen leaves included (skdpol
  ``_blt.py`` notes; Denisov et al. 2022 Thm 2.1). m = 1 / mu with
  mu = ``skdpol.accounting.gaussian_mu_for_budget(1, 1e-6)`` (dp-accounting's
  exact Gaussian), so the whole stream is (1, 1e-6)-DP.
* Sufficient-statistic leaves [pack(sum v v^T) / s_V, sum w v / s_u] with
  |w| <= M (M = 1 for +-1 labels or clipped unit labels, tau for clipped
  residuals) have the joint sensitivity ``skdpol.online.joint_sensitivity(R, M,
  s_V, s_u)`` (derived in skdpol/online/_ftl.py), s_V, s_u = default_scales(R, M).
* Model solves read only released sums and public numbers (the per-release
  noise std is public): post-processing.
* First-order streams (``ftrl_momentum``): the leaf of a round is the sum of
  its rows' clipped gradients at the published model (replace-one
  sensitivity 2 tau R for Huber residuals clipped at tau, 2 R for the logistic
  loss), through the same BLT (horizon = rounds); momentum, steps and tail
  averaging act on released prefix sums only.
* Warm start (``warm``): the first chunk (public positions) is released once on
  its own with the full budget (a one-shot Gaussian of the same leaf), the
  rest by the stream, also with the full budget: a replaced row lies in one of
  the two disjoint sets, so by parallel composition (the stream's leaves may
  depend on the warm release: adaptive, still one mechanism per row) every row
  is covered by (1, 1e-6).

Pitfall, prototype only: leaves are summed in float64 and released through
the float sampler; the package's grid / float-leaf sensitivity inflation
(skdpol/online/_ftl.py) must be applied when this is built in.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/proto_streams.py \
        --seeds 5 --out /tmp/main.md          # the main table (~1 min)
    ... --seeds 5 --sweep --skip-skdpol       # the first-order stream's (b, lr) grid
    ... --seeds 3 --validate                  # (b, lr, c) picked on validation rows
    ... --calibration                         # the winners' noise per table
"""

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

from _common import machine_lines

import numpy as np
import pandas as pd
from sklearn.linear_model import SGDClassifier, SGDRegressor
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.accounting import gaussian_mu_for_budget
from skdpol.datasets import (adult_preprocessor, data_home, load_adult, load_table,
                             load_wine_quality, row_norm_bound, scale_to_unit,
                             wine_quality_preprocessor)
from skdpol.mechanisms import BLTPrefixSum, pack_symmetric, packed_dim, unpack_symmetric
from skdpol.online import default_scales, joint_sensitivity
from skdpol.online._ftl import ridge_from_sums, shrink_ridge
from skdpol.preprocessing import from_schema

DELTA = 1e-6
CHUNK = 1_000
INTERCEPT = 1.0  # the constant column's value in unit space (skdpol: 1)
R = math.hypot(1.0, INTERCEPT)  # bound of unit rows with the intercept column


def set_intercept(c):
    """Public: the constant column's value c, so ||v|| <= R = sqrt(1 + c^2)."""
    global INTERCEPT, R
    INTERCEPT, R = float(c), math.hypot(1.0, c)


# ===================================================================== data
# Credit default and King County have no loader in skdpol: minimal ones from
# public ranges only (never from the rows).
CREDIT_LOG = {  # (low, high): NT dollars, log1p scale
    "LIMIT_BAL": (0.0, 1e6),
    **{f"PAY_AMT{k}": (0.0, 1e6) for k in range(1, 7)},
}
CREDIT_SIGNED_LOG_BOUND = 1e6  # BILL_AMT*: sign(x) log1p|x| / log1p(1e6), in [-1, 1]
CREDIT_PAY = [f"PAY_{k}" for k in (0, 2, 3, 4, 5, 6)]  # documented -2..9
CREDIT_CATS = {"SEX": [1, 2], "EDUCATION": [1, 2, 3, 4], "MARRIAGE": [1, 2, 3]}  # + "other"


def credit_features(df):
    cols = []
    for c, (lo, hi) in CREDIT_LOG.items():
        cols.append(scale_to_unit(df[[c]].to_numpy(float), low=[lo], high=[hi], log=[True]))
    cols.append(scale_to_unit(df[["AGE"]].to_numpy(float), low=[18.0], high=[80.0], log=[False]))
    for c in CREDIT_PAY:
        cols.append(scale_to_unit(df[[c]].to_numpy(float), low=[-2.0], high=[9.0], log=[False]))
    for k in range(1, 7):
        b = df[f"BILL_AMT{k}"].to_numpy(float)
        cols.append(np.clip(np.sign(b) * np.log1p(np.abs(b)) / np.log1p(CREDIT_SIGNED_LOG_BOUND),
                            -1, 1)[:, None])
    for c, cats in CREDIT_CATS.items():
        v = df[c].to_numpy()
        block = np.stack([v == k for k in cats] + [~np.isin(v, cats)], axis=1).astype(float)
        cols.append(block)
    X = np.hstack(cols)
    # 7 log + 1 age + 6 pay + 6 bill entries each in [-1, 1], 3 one-hot blocks
    return X, math.sqrt(7 + 1 + 6 + 6 + 3)


KC_RANGES = {  # (low, high, log): plausible for houses sold in King County, not from the rows
    "bedrooms": (0, 20, False), "bathrooms": (0, 10, False),
    "sqft_living": (200, 20_000, True), "sqft_lot": (200, 2_000_000, True),
    "floors": (1, 4, False), "waterfront": (0, 1, False), "view": (0, 4, False),
    "condition": (1, 5, False), "grade": (1, 13, False),
    "sqft_above": (200, 20_000, True), "sqft_basement": (0, 10_000, True),
    "yr_built": (1880, 2015, False), "yr_renovated": (0, 2015, False),
    "lat": (47.0, 48.0, False), "long": (-122.6, -121.0, False),  # King County's extent
    "sqft_living15": (200, 20_000, True), "sqft_lot15": (200, 2_000_000, True),
}
KC_LOG_PRICE = (math.log(1e4), math.log(1e7))  # public plausible sale prices $10k-$10M


def kc_features(df):
    lo, hi, lg = (list(t) for t in zip(*KC_RANGES.values()))
    X = scale_to_unit(df[list(KC_RANGES)].to_numpy(float), low=lo, high=hi, log=lg)
    return X, math.sqrt(len(KC_RANGES))


def schema_table(name):
    """A table through its shipped public schema (skdpol.datasets.table_schema):
    numeric columns centred on [-1, 1], the schemas' bins and one-hot blocks."""
    data = load_table(name)
    pre = from_schema(data.schema)
    X = pre.preprocessor.fit_transform(data.X)  # reads no statistic of the rows
    y = pre.label_transform(data.y)
    if pre.classes is not None:
        return dict(task="clf", X=X, y=(y == pre.classes[1]).astype(int),
                    data_norm=pre.data_norm, split="random")
    return dict(task="reg", X=X, y=y, data_norm=pre.data_norm, offset=0.0,
                y_bound=pre.y_bound, metric="R2", split="random")


def load_tables(names, folder, features="schema"):
    """name -> dict(task, X, y, split(seed) -> (Xtr, ytr, Xte, yte), data_norm, offset, y_bound).

    ``features="schema"``: credit default and King County through their shipped
    schemas; ``"proto"``: this script's first loaders ([0, 1] columns)."""
    out = {}
    if features == "schema":
        if "credit" in names:
            out["credit"] = dict(schema_table("credit_default"), metric="AUC")
        if "kc" in names:
            out["kc"] = schema_table("kc_house_sales")
        if "wine" in names:
            out["wine"] = schema_table("wine_quality")
        if "adult" in names:
            t = schema_table("adult")
            n = 32_561  # the file's own split: adult.data, then adult.test
            out["adult"] = dict(task="clf", Xtr=t["X"][:n], ytr=t["y"][:n], Xte=t["X"][n:],
                                yte=t["y"][n:], data_norm=t["data_norm"], metric="accuracy",
                                split="file")
        names = [n for n in names if n not in ("credit", "kc", "wine", "adult")]
    if "credit" in names:
        df = pd.read_csv(folder / "credit_default.csv.gz")
        X, dn = credit_features(df)
        out["credit"] = dict(task="clf", X=X, y=df["default.payment.next.month"].to_numpy(int),
                             data_norm=dn, metric="AUC", split="random")
    if "kc" in names:
        df = pd.read_csv(folder / "kc_house_sales.csv.gz")
        X, dn = kc_features(df)
        lo, hi = KC_LOG_PRICE
        out["kc"] = dict(task="reg", X=X, y=np.log(df["price"].to_numpy(float)), data_norm=dn,
                         offset=(lo + hi) / 2, y_bound=(hi - lo) / 2, metric="R2", split="random")
    if "adult" in names:
        a = load_adult(folder)
        pre = adult_preprocessor().fit(a.X_train.iloc[:10])  # reads no statistic
        out["adult"] = dict(task="clf", Xtr=pre.transform(a.X_train), ytr=a.y_train,
                            Xte=pre.transform(a.X_test), yte=a.y_test,
                            data_norm=row_norm_bound(pre), metric="accuracy", split="file")
    if "wine" in names:
        w = load_wine_quality(folder)
        pre = wine_quality_preprocessor().fit(w.X.iloc[:10])
        out["wine"] = dict(task="reg", X=pre.transform(w.X), y=w.y, data_norm=row_norm_bound(pre),
                           offset=w.y_offset, y_bound=w.y_bound, metric="R2", split="random")
    return out


def split(table, seed):
    if table["split"] == "file":
        return table["Xtr"], table["ytr"], table["Xte"], table["yte"]
    Xtr, Xte, ytr, yte = train_test_split(table["X"], table["y"], test_size=0.2,
                                          random_state=seed)
    return Xtr, ytr, Xte, yte


def unit_rows(X, data_norm):
    V = X / data_norm
    norms = np.linalg.norm(V, axis=1)
    V = V / np.maximum(norms / 1.0, 1.0)[:, None]
    return np.hstack([V, np.full((V.shape[0], 1), INTERCEPT)])


def score(table, coef_fn, Xte, yte):
    """coef_fn: unit-space model (d+1,) or a callable X -> scores."""
    if table["task"] == "clf":
        s = coef_fn(Xte)
        if table["metric"] == "AUC":
            return roc_auc_score(yte, s)
        return accuracy_score(yte, (s > 0).astype(int))
    pred = coef_fn(Xte)
    return r2_score(yte, pred)


def unit_predictor(table, theta):
    """X -> prediction from a unit-space model (scores for clf, labels for reg)."""
    def f(X):
        s = unit_rows(X, table["data_norm"]) @ theta
        if table["task"] == "reg":
            return s * table["y_bound"] + table["offset"]
        return s
    return f


# ================================================================ mechanisms
def multiplier(eps):
    """Noise multiplier of one Gaussian mechanism (whole BLT stream) at (eps, DELTA)."""
    return 0.0 if math.isinf(eps) else 1.0 / gaussian_mu_for_budget(eps, DELTA)


class SSStream:
    """Released prefix sums of leaves [pack(V_s) / s_V, w_s / s_u], one leaf per release.

    Replace-one sensitivity of a leaf: joint_sensitivity(R, M, s_V, s_u) when
    |w per row| <= M and ||v|| <= R (skdpol/online/_ftl.py). One BLT stream:
    one Gaussian mechanism of multiplier m for every release.
    """

    def __init__(self, d, M, T, m, rng, b=1.0, row_bound=None):
        Rb = R if row_bound is None else row_bound
        self.d, self.k = d, packed_dim(d)
        self.s_V, self.s_u = default_scales(Rb, M)
        self.s_u *= b  # b > 1: less noise on V, more on w (public balance)
        self.sens = joint_sensitivity(Rb, M, self.s_V, self.s_u)
        self.blt = BLTPrefixSum(dim=self.k + d, sensitivity=self.sens, noise_multiplier=m,
                                horizon=max(T, 1), rng=rng, sampler="float")
        self.t = 0

    def add(self, V, w):
        self.blt.add(np.concatenate([pack_symmetric(V) / self.s_V, w / self.s_u]))
        self.t += 1

    def release(self):
        """(V_hat, w_hat, std of V entries, std of w entries): released + public."""
        z = self.blt.release()
        std = float(self.blt.noise_std_at(self.t)[0])
        return (unpack_symmetric(z[:self.k], self.d) * self.s_V, z[self.k:] * self.s_u,
                std * self.s_V, std * self.s_u)


def one_shot(V, w, M, m, rng, b=1.0):
    """One Gaussian release of the same leaf (warm start): multiplier m, same sensitivity."""
    d, k = len(w), packed_dim(len(w))
    s_V, s_u = default_scales(R, M)
    s_u *= b
    sens = joint_sensitivity(R, M, s_V, s_u)
    z = np.concatenate([pack_symmetric(V) / s_V, w / s_u])
    std = m * sens
    z = z + std * rng.standard_normal(z.size)
    return unpack_symmetric(z[:k], d) * s_V, z[k:] * s_u, std * s_V, std * s_u


def solve(V, u, n, sV, su, mode, center=None):
    """Model from released sums (post-processing).

    "floor": skdpol's PQFTL solve (eigenvalues raised to sqrt(2d) sV, ridge
    n * 1e-3, James-Stein shrink on u). "ada<k>": AdaSSP-style ridge from the
    public noise level only: eigenvalues of V_hat clipped at 0, plus
    lambda = k sqrt(2d) sV (no budget spent on lambda_min; see the doc page),
    plus a tiny n * 1e-6 so eps = inf stays defined; no shrink.
    """
    d = len(u)
    if mode == "floor":
        coef = ridge_from_sums(V, u, n, 1e-3, math.sqrt(2 * d) * sV)
        return shrink_ridge(coef, u, su**2)
    if mode == "floor_noshrink":  # the residual streams' floor (u is not one release)
        if center is not None:
            u = u + n * 1e-3 * center
        return ridge_from_sums(V, u, n, 1e-3, math.sqrt(2 * d) * sV)
    if mode.startswith("ada"):
        k = float(mode[3:] or 1)
        lam, Q = np.linalg.eigh(V)
        ridge = k * math.sqrt(2 * d) * sV + n * 1e-6
        lam = np.maximum(lam, 0.0) + ridge
        if center is not None:  # ridge centred at a published model (proximal)
            u = u + ridge * center
        return Q @ ((Q.T @ u) / lam)
    raise ValueError(mode)


# ================================================================ candidates
def chunks(n, size=CHUNK):
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def ss_stream(V_rows, w, eps, rng, mode="floor", release_every=1, b=1.0, c=1.0):
    """Sufficient statistics of fixed labels w (|w| <= 1): the current regressor's
    PQFTL (w = clipped unit labels) or least squares on +-1 labels (classifier,
    = PASS-GLM degree 2 up to a positive scale). Leaf sensitivity
    joint_sensitivity(R, 1, 2 R^2, 2 R) = sqrt(9/8) ~ 1.061 for any row bound R
    (R = sqrt(1 + c^2) with the constant column c). ``release_every`` k: a leaf
    (and a release) every k chunks, T = ceil(chunks / k) releases."""
    n, d = V_rows.shape
    if c != 1.0:  # intercept column c instead of 1: rows of norm <= sqrt(1 + c^2)
        V_rows = V_rows.copy()
        V_rows[:, -1] *= c
    cs = chunks(n)
    T = -(-len(cs) // release_every)
    st = SSStream(d, 1.0, T, multiplier(eps), rng, b, row_bound=math.hypot(1.0, c))
    Vacc, wacc, used = np.zeros((d, d)), np.zeros(d), 0
    for i, (lo, hi) in enumerate(cs):
        A = V_rows[lo:hi]
        Vacc += A.T @ A
        wacc += w[lo:hi] @ A
        if (i + 1) % release_every == 0 or i == len(cs) - 1:
            st.add(Vacc, wacc)
            Vacc, wacc = np.zeros((d, d)), np.zeros(d)
            used = hi
    V, u, sV, su = st.release()
    theta = solve(V, u, used, sV, su, mode)
    theta[-1] *= c  # the same model on rows with the constant column 1
    return theta


def residual_stream(V_rows, y, eps, rng, *, kind, tau=1.0, mode="floor", warm=False,
                    release_every=1, b=1.0, prox=False):
    """FTL on quadratic models centred at the published model, with clipped residuals.

    Leaf of a release: [pack(sum v v^T) / s_V, sum r v / s_u], r the residual of
    each row against the model published before its chunk, clipped:
    * kind="reg": r = clip(y - theta.v, -tau, tau) (unit labels; Huber-like);
      sensitivity joint_sensitivity(sqrt 2, tau, ...) (u block 2 R tau).
    * kind="clf": r = y01 - sigmoid(theta.v) in [-1, 1] (tau = 1), the logistic
      gradient; Boehning's curvature bound 1/4 (model: (V/4 + ridge)^-1 (...)).
    Released: V_hat_t, Rsum_hat_t (prefix sums). Model at release t:
      theta_t = solve(kappa V_hat_t, Rsum_hat_t + kappa sum_s dV_hat_s theta_(s-1)),
    dV_hat_s the increments of the released V prefix sums (post-processing):
    with no clipping it is the exact ridge/FTL model (regression) or one
    Boehning-Newton step per chunk, accumulated (classification).
    """
    n, d = V_rows.shape
    kappa = 0.25 if kind == "clf" else 1.0
    m = multiplier(eps)
    cs = chunks(n)
    theta = np.zeros(d)
    S, Rw, Vw = np.zeros(d), np.zeros(d), np.zeros((d, d))  # warm part (released)
    sVw = suw = 0.0
    start = 0
    if warm:  # regression: first chunk released once, full label range (M = 1), own budget
        if kind != "reg":
            raise ValueError("warm start is for regression (clf residuals at 0 are in [-1/2, 1/2])")
        lo, hi = cs[0]
        A = V_rows[lo:hi]
        Vw, Rw, sVw, suw = one_shot(A.T @ A, np.clip(y[lo:hi], -1, 1) @ A, 1.0, m, rng, b)
        theta = solve(Vw, Rw, hi - lo, sVw, suw, mode)
        start = 1
    rest = cs[start:]
    T = -(-len(rest) // release_every)
    st = SSStream(d, tau, T, m, rng, b)
    prevV = np.zeros((d, d))
    Vacc, racc, theta_pub, used = np.zeros((d, d)), np.zeros(d), theta.copy(), 0
    for i, (lo, hi) in enumerate(rest):
        A = V_rows[lo:hi]
        s = A @ theta_pub
        if kind == "clf":
            r = y[lo:hi] - 1.0 / (1.0 + np.exp(-s))
        else:
            r = np.clip(y[lo:hi] - s, -tau, tau)
        Vacc += A.T @ A
        racc += r @ A
        if (i + 1) % release_every == 0 or i == len(rest) - 1:
            st.add(Vacc, racc)
            Vacc, racc = np.zeros((d, d)), np.zeros(d)
            Vh, Rh, sV, su = st.release()
            S = S + (Vh - prevV) @ theta_pub
            prevV = Vh
            used = hi
            Vtot = Vh + Vw
            sVt = math.hypot(sV, sVw)
            u = Rh + Rw + kappa * S
            theta_pub = solve(kappa * Vtot, u, used, kappa * sVt, su, mode if mode != "floor"
                              else "floor_noshrink", center=theta_pub if prox else None)
    return theta_pub


def ftrl_momentum(V_rows, y, eps, rng, *, kind="reg", tau=0.125, round_rows=100, lr=None,
                  beta=0.9, tail=0.0, c=1.0):
    """First-order stream: DP-FTRL / DP-MF with heavy-ball momentum (Kairouz et al. 2021).

    Round = ``round_rows`` rows; its leaf is the gradient sum at the model
    published before the round: reg: sum -clip(y - theta.v, tau) v (Huber),
    clf: sum -(y01 - sigmoid(theta.v)) v. Per-row gradient norm <= tau R
    (reg) or R (clf), so the leaf's replace-one sensitivity is 2 tau R (2 R).
    Leaves go through one BLT stream (multiplier m, horizon = rounds); the
    noisy per-round gradients are the increments of the released prefix sums,
    and the optimiser (momentum beta, step lr on the round's mean gradient,
    default 1 / R^2 = 1 / the public curvature bound) is post-processing.
    A model is published after every round (more often than every chunk:
    the budget covers all of them). ``tail`` > 0: the published model is the
    running mean of the iterates from round (1 - tail) * t on (post-processing).
    """
    n, d = V_rows.shape
    Rc = math.hypot(1.0, c)  # intercept column c: rows of norm <= sqrt(1 + c^2)
    if c != 1.0:
        V_rows = V_rows.copy()
        V_rows[:, -1] *= c
    lr = 1.0 / Rc**2 if lr is None else lr
    rounds = chunks(n, round_rows)
    g_bound = tau * Rc if kind == "reg" else Rc
    blt = BLTPrefixSum(dim=d, sensitivity=2 * g_bound, noise_multiplier=multiplier(eps),
                       horizon=len(rounds), rng=rng, sampler="float")
    theta, vel, prev = np.zeros(d), np.zeros(d), np.zeros(d)
    history = []
    for lo, hi in rounds:
        A = V_rows[lo:hi]
        s = A @ theta
        if kind == "reg":
            r = np.clip(y[lo:hi] - s, -tau, tau)
        else:
            r = y[lo:hi] - 1.0 / (1.0 + np.exp(-s))
        blt.add(-(r @ A))
        G = blt.release()
        g = (G - prev) / (hi - lo)
        prev = G
        vel = beta * vel + g
        theta = theta - lr * vel
        history.append(theta)
    if tail > 0:
        k = max(1, int(math.ceil(tail * len(history))))
        theta = np.mean(history[-k:], axis=0)
    theta = theta.copy()
    theta[-1] *= c  # the same model on rows with the constant column 1
    return theta


# ================================================================ runners
def run_skdpol(table, Xtr, ytr, Xte, yte, seed, eps, how, **extra):
    common = dict(epsilon=eps, delta=DELTA, data_norm=table["data_norm"], random_state=seed,
                  **extra)
    n = Xtr.shape[0]
    if table["task"] == "clf":
        est = PrivateOnlineLogistic(**common, **({"horizon": n} if how == "pf" else {}))
        if how == "pf":
            for lo, hi in chunks(n):
                est.partial_fit(Xtr[lo:hi], ytr[lo:hi], classes=[0, 1])
        else:
            est.fit(Xtr, ytr)
        return score(table, est.decision_function, Xte, yte)
    off = table["offset"]
    est = PrivateOnlineRegressor(**common, y_bound=table["y_bound"],
                                 **({"horizon": n} if how == "pf" else {}))
    if how == "pf":
        for lo, hi in chunks(n):
            est.partial_fit(Xtr[lo:hi], ytr[lo:hi] - off)
    else:
        est.fit(Xtr, ytr - off)
    return score(table, lambda X: est.predict(X) + off, Xte, yte)


def run_sgd(table, Xtr, ytr, Xte, yte, seed):
    n = Xtr.shape[0]
    if table["task"] == "clf":
        est = SGDClassifier(loss="log_loss", random_state=seed)
        for lo, hi in chunks(n):
            est.partial_fit(Xtr[lo:hi], ytr[lo:hi], classes=[0, 1])
        return score(table, est.decision_function, Xte, yte)
    off = table["offset"]
    est = SGDRegressor(random_state=seed)
    for lo, hi in chunks(n):
        est.partial_fit(Xtr[lo:hi], ytr[lo:hi] - off)
    return score(table, lambda X: est.predict(X) + off, Xte, yte)


def round_rule(n):
    """Public round size of the first-order stream: 100 rows, or 50 when that
    would give fewer than 100 rounds (set on these four tables; see the page)."""
    return 100 if n >= 100 * 100 else 50


def ftrl_rule(V, y, e, g, kind, c=1.0, tail=0.5):
    """Rounds of round_rule(n) rows, step b / 50 / R^2 on the round's mean gradient
    (the same step per row whatever b), momentum 0.95, mean of the last half."""
    b = round_rule(V.shape[0])
    return ftrl_momentum(V, y, e, g, kind=kind, round_rows=b, lr=b / 50 / (1 + c * c),
                         beta=0.95, tail=tail, c=c)


def sweep_candidates(task):
    """The first-order stream's neighbours of the rule (``--sweep``): round rows b,
    step lr / R^2 on the round's mean gradient; momentum 0.95, tail 0.5."""
    kind = "clf" if task == "clf" else "reg"
    out = {}
    for b in (50, 100, 200):
        for lr in (1, 2):
            out[f"DP-FTRL momentum b={b} lr={lr}/R^2"] = (
                lambda b, lr: lambda V, y, e, g: ftrl_momentum(
                    V, y.astype(float), e, g, kind=kind, round_rows=b, lr=lr / R**2,
                    beta=0.95, tail=0.5))(b, lr)
    return out


def validate(tables, n_seeds):
    """Choose the first-order stream's (b, lr, c) on a validation split of the
    TRAINING rows only (the last 20 % of each seed's training split), eps = 1:
    a check that the rule is not a test-set pick. Returns markdown lines."""
    grid = [(b, lr, c) for b in (50, 100, 200) for lr in (1, 2) for c in (1.0, 0.5)]
    lines = ["| table | best on validation (b, lr x R^-2, c) | its validation score | "
             "rule's (c=1 / c=0.5) validation score |", "|---|---|---|---|"]
    for name, t in tables.items():
        scores = {g: [] for g in grid}
        k = 0
        for seed in range(n_seeds):
            Xtr, ytr, _, _ = split(t, seed)
            k = int(0.8 * Xtr.shape[0])
            Xf, yf, Xv, yv = Xtr[:k], ytr[:k], Xtr[k:], ytr[k:]
            V = unit_rows(Xf, t["data_norm"])
            lab = yf.astype(float) if t["task"] == "clf" else np.clip(
                (yf - t["offset"]) / t["y_bound"], -1, 1)
            for (b, lr, c) in grid:
                th = ftrl_momentum(V, lab, 1.0, np.random.default_rng([seed, 7]),
                                   kind="clf" if t["task"] == "clf" else "reg", round_rows=b,
                                   lr=lr / (1 + c * c), beta=0.95, tail=0.5, c=c)
                scores[(b, lr, c)].append(score(t, unit_predictor(t, th), Xv, yv))
        med = {g: float(np.median(v)) for g, v in scores.items()}
        best = max(med, key=med.get)
        b_rule = round_rule(k)
        rule = [med[(b_rule, b_rule // 50, c)] for c in (1.0, 0.5)]
        lines.append(f"| {name} | {best} | {med[best]:.3f} | {rule[0]:.3f} / {rule[1]:.3f} "
                     f"(b={b_rule}) |")
        print(lines[-1], flush=True)
    # the LS+-1 stream's ridge k and release_every (c = 0.5), classification only
    ls_grid = [(k, e) for k in (0.1, 0.3, 1.0) for e in (1, 4, 8)]
    ls_lines = ["", "| table | LS+-1 SS, c = 0.5: validation median per (k, every) |", "|---|---|"]
    for name, t in tables.items():
        if t["task"] != "clf":
            continue
        scores = {g: [] for g in ls_grid}
        for seed in range(n_seeds):
            Xtr, ytr, _, _ = split(t, seed)
            k = int(0.8 * Xtr.shape[0])
            V = unit_rows(Xtr[:k], t["data_norm"])
            for (kk, e) in ls_grid:
                th = ss_stream(V, 2.0 * ytr[:k] - 1.0, 1.0, np.random.default_rng([seed, 7]),
                               f"ada{kk}", e, c=0.5)
                scores[(kk, e)].append(score(t, unit_predictor(t, th), Xtr[k:], ytr[k:]))
        ls_lines.append(f"| {name} | " + ", ".join(
            f"({kk:g}, {e}): {np.median(v):.3f}" for (kk, e), v in scores.items()) + " |")
        print(ls_lines[-1], flush=True)
    return lines + ls_lines


def candidates(task, sweep=False):
    """name -> fn(V_rows, labels, eps, rng) -> unit-space model.

    labels: 0/1 for clf (each candidate maps them), clipped unit labels for reg."""
    if sweep:
        return sweep_candidates(task)
    if task == "clf":
        pm = lambda y: 2 * y - 1.0  # noqa: E731
        return {
            "LS+-1 SS, floor": lambda V, y, e, g: ss_stream(V, pm(y), e, g, "floor"),
            "LS+-1 SS, ada0.3": lambda V, y, e, g: ss_stream(V, pm(y), e, g, "ada0.3"),
            "LS+-1 SS, ada0.3, every 4": lambda V, y, e, g: ss_stream(V, pm(y), e, g,
                                                                    "ada0.3", 4),
            "LS+-1 SS, ada0.3, every 4, c=0.5": lambda V, y, e, g: ss_stream(
                V, pm(y), e, g, "ada0.3", 4, c=0.5),
            "LS+-1 SS, ada0.3, every 8, c=0.5": lambda V, y, e, g: ss_stream(
                V, pm(y), e, g, "ada0.3", 8, c=0.5),
            "LS+-1 SS, ada0.3, c=0.5 (every chunk)": lambda V, y, e, g: ss_stream(
                V, pm(y), e, g, "ada0.3", 1, c=0.5),
            "Boehning residual SS, ada1": lambda V, y, e, g: residual_stream(
                V, y.astype(float), e, g, kind="clf", mode="ada1"),
            "DP-FTRL momentum (rule)": lambda V, y, e, g: ftrl_rule(V, y.astype(float), e, g,
                                                                    "clf"),
            "DP-FTRL momentum (rule), c=0.5": lambda V, y, e, g: ftrl_rule(
                V, y.astype(float), e, g, "clf", c=0.5),
        }
    return {
        "SS (PQFTL re-impl), floor": lambda V, y, e, g: ss_stream(V, y, e, g, "floor"),
        "SS, ada0.3": lambda V, y, e, g: ss_stream(V, y, e, g, "ada0.3"),
        "SS, ada0.3, every 4": lambda V, y, e, g: ss_stream(V, y, e, g, "ada0.3", 4),
        "SS, ada0.3, every 4, c=0.5": lambda V, y, e, g: ss_stream(V, y, e, g, "ada0.3", 4,
                                                                   c=0.5),
        "residual SS tau=.125, ada1, warm": lambda V, y, e, g: residual_stream(
            V, y, e, g, kind="reg", tau=0.125, mode="ada1", warm=True),
        "residual SS tau=.25, ada1, warm, prox": lambda V, y, e, g: residual_stream(
            V, y, e, g, kind="reg", tau=0.25, mode="ada1", warm=True, prox=True),
        "DP-FTRL momentum Huber tau=.125 (rule)": lambda V, y, e, g: ftrl_rule(V, y, e, g,
                                                                               "reg"),
        "DP-FTRL momentum Huber (rule), c=0.5": lambda V, y, e, g: ftrl_rule(
            V, y, e, g, "reg", c=0.5),
        "DP-FTRL momentum Huber (rule), c=0.5, tail 0.7": lambda V, y, e, g: ftrl_rule(
            V, y, e, g, "reg", c=0.5, tail=0.7),
    }


def run_table(name, table, seeds, results, only=None, skip_skdpol=False, sweep=False):
    for seed in seeds:
        Xtr, ytr, Xte, yte = split(table, seed)
        V = unit_rows(Xtr, table["data_norm"])
        if table["task"] == "clf":
            labels = ytr
        else:
            labels = np.clip((ytr - table["offset"]) / table["y_bound"], -1, 1)
        t0 = time.perf_counter()

        def rec(method, eps, value):
            results.append(dict(table=name, method=method, eps=eps, seed=seed, score=float(value)))
            print(f"{name} seed={seed} eps={eps} {method}: {value:.4f}", flush=True)

        if not skip_skdpol:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec("skdpol fit", 1.0, run_skdpol(table, Xtr, ytr, Xte, yte, seed, 1.0, "fit"))
                rec("skdpol fit", 0.5, run_skdpol(table, Xtr, ytr, Xte, yte, seed, 0.5, "fit"))
                for eps in (1.0, math.inf):
                    rec("skdpol partial_fit", eps,
                        run_skdpol(table, Xtr, ytr, Xte, yte, seed, eps, "pf"))
                    if table["task"] == "clf":  # the current first-order stream, larger steps
                        rec("skdpol partial_fit, alpha=0.002", eps,
                            run_skdpol(table, Xtr, ytr, Xte, yte, seed, eps, "pf", alpha=0.002))
            rec("SGD one pass (non-private)", math.inf, run_sgd(table, Xtr, ytr, Xte, yte, seed))
        for cname, fn in candidates(table["task"], sweep).items():
            if only and not any(o in cname for o in only):
                continue
            for eps in (1.0, math.inf):
                rng = np.random.default_rng([seed, 31])
                theta = fn(V, labels, eps, rng)
                rec(cname, eps, score(table, unit_predictor(table, theta), Xte, yte))
        print(f"--- {name} seed {seed}: {time.perf_counter() - t0:.1f} s", flush=True)


def calibration_lines(tables, eps=1.0):
    """The noise of the winners per table: public numbers only (n, d, bounds, rounds)."""
    from skdpol.mechanisms._blt import blt_for_horizon
    m = multiplier(eps)
    lines = [f"Noise multiplier m = 1 / mu(eps={eps:g}, delta={DELTA:g}) = {m:.3f} "
             "(dp-accounting's exact Gaussian, via skdpol.accounting.gaussian_mu_for_budget); "
             "BLT factor = sens(C) x max_error(T) (noise of the last prefix sum per unit of "
             "m x leaf sensitivity; 1 would be a single release).", "",
             "| table | n train | d (+1) | stream | leaf sensitivity | releases T | "
             "BLT factor | std of last prefix sum (per coordinate) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, t in tables.items():
        n = t["Xtr"].shape[0] if "Xtr" in t else int(round(0.8 * t["X"].shape[0]))
        d = (t["Xtr"] if "Xtr" in t else t["X"]).shape[1] + 1
        rows = []
        b = round_rule(n)
        Rc = math.hypot(1, 0.5)
        if t["task"] == "reg":
            rows.append(("DP-FTRL momentum Huber, c=0.5", 2 * 0.125 * Rc, -(-n // b)))
        else:
            rows.append(("DP-FTRL momentum logistic, c=0.5", 2 * Rc, -(-n // b)))
            s_V, s_u = default_scales(Rc, 1.0)
            js = joint_sensitivity(Rc, 1.0, s_V, s_u)
            for k in (1, 8):
                rows.append((f"LS+-1 SS every {k}, c=0.5 (leaf scaled by s_V={s_V:g}, "
                             f"s_u={s_u:.3g})", js, -(-(-(-n // CHUNK)) // k)))
        for label, sens, T in rows:
            blt = blt_for_horizon(T)
            f = blt.sensitivity(T) * blt.max_error(T)
            lines.append(f"| {name} | {n} | {d} | {label} | {sens:.3f} | {T} | {f:.2f} | "
                         f"{m * sens * f:.2f} |")
    return "\n".join(lines)


NAMES = {"credit": "credit default (AUC)", "kc": "King County, log price (R^2)",
         "adult": "Adult (accuracy)", "wine": "wine quality (R^2)"}


def cell(results, table, method, eps):
    v = [r["score"] for r in results if r["table"] == table and r["method"] == method
         and (r["eps"] == eps or (math.isinf(eps) and math.isinf(r["eps"])))]
    if not v:
        return ""
    if len(v) == 1:
        return f"{v[0]:.3f}"
    return f"{np.median(v):.3f} [{min(v):.3f}, {max(v):.3f}]"


def report(results, names, n_seeds, command, seconds):
    lines = [f"Produced by `{command}` ({n_seeds} seeds, {seconds / 60:.1f} min). Cells: median "
             "[min, max] over seeds (seed = split for credit, King County and wine, noise "
             "for all).", "", *machine_lines(), ""]
    for task, title in (("clf", "Classification"), ("reg", "Regression")):
        tabs = [t for t in names if (t in ("credit", "adult")) == (task == "clf")]
        if not tabs:
            continue
        methods = []
        for r in results:
            if r["table"] in tabs and r["method"] not in methods:
                methods.append(r["method"])
        header = ["method"] + [f"{NAMES[t]}, eps={e}" for t in tabs for e in ("1", "inf")]
        lines += [f"### {title}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        for mth in methods:
            cells = []
            for t in tabs:
                for e in (1.0, math.inf):
                    c = cell(results, t, mth, e)
                    if mth == "skdpol fit" and e == math.inf:
                        c = "eps=0.5: " + cell(results, t, mth, 0.5)
                    cells.append(c)
            lines.append("| " + " | ".join([mth] + cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--tables", default="credit,kc,adult,wine")
    p.add_argument("--only", default="", help="comma list of substrings of candidate names")
    p.add_argument("--skip-skdpol", action="store_true")
    p.add_argument("--json", help="append raw results to this JSON file")
    p.add_argument("--out", help="write the results tables (markdown) here")
    p.add_argument("--validate", action="store_true",
                   help="pick the first-order stream's (b, lr, c) on validation rows, print, stop")
    p.add_argument("--calibration", action="store_true",
                   help="print the winners' noise calibration per table and stop")
    p.add_argument("--features", choices=["schema", "proto"], default="schema",
                   help="credit default and King County through the shipped public schemas "
                        "(default) or this script's first [0, 1] loaders")
    p.add_argument("--sweep", action="store_true",
                   help="the first-order stream's (round rows, step) grid, not the candidates")
    args = p.parse_args()
    folder = data_home()
    if folder is None:
        raise SystemExit("no shared data folder")
    names = args.tables.split(",")
    tables = load_tables(names, folder, args.features)
    if args.validate:
        print("\n".join(validate(tables, args.seeds)))
        return
    if args.calibration:
        print(calibration_lines(tables))
        return
    results = []
    t0 = time.perf_counter()
    for name in names:
        run_table(name, tables[name], range(args.seeds), results,
                  only=[o for o in args.only.split(",") if o], skip_skdpol=args.skip_skdpol,
                  sweep=args.sweep)
    if args.out:
        cmd = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/proto_streams.py " \
            + " ".join(sys.argv[1:])
        Path(args.out).write_text(report(results, names, args.seeds, cmd,
                                         time.perf_counter() - t0))
    if args.json:
        path = Path(args.json)
        old = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(old + results))


if __name__ == "__main__":
    main()
