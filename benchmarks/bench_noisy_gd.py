"""Research behind ``skdpol.online.gradient_schedule`` (``fit``'s noisy GD).

Data: UCI Adult from the project's shared folder through the package's own
public-schema preprocessing (``skdpol.datasets.adult_preprocessor``;
``--prep linear`` without its one-hot bins, ``--prep bins`` with them, the
default), ``data_norm = row_norm_bound(preprocessor)``, the file's split
(32,561 train, 16,281 test), label income > 50K. Optionally sklearn's
bundled ``load_digits`` (10 classes, pixels / 16, data_norm 8, first 1,200
rows train) for the multinomial loss.

Unit space (what the estimators learn in): v = [x / data_norm clipped to
norm 1, 1], so ||v|| <= R = sqrt(2); labels +-1 or class indices.

One sub-command, ``sweep`` (each run under ~5 minutes on one core). It runs a
batched replica of ``NoisyGradientDescent``'s iteration (float32, every
configuration of one step count K as a column of one matrix product) and
prints the test accuracy of each configuration. With ``--c`` it sweeps the
constant c of ``skdpol.online.gradient_schedule`` (T = c / nu) instead of K:

    python benchmarks/bench_noisy_gd.py sweep --eps 1 --seeds 3 \
        --K 100 200 400 --lr 1 2 --mu 0.9 --alpha 0
    python benchmarks/bench_noisy_gd.py sweep --n 2000 --eps 0.5 1 2 --seeds 3 \
        --lr 1 --mu 0.9 --alpha 0 --c 1 2 --k-max 400

Measured (2026-11-23, Adult with the bins, 3 seeds, final iterate, the second
command with n = 2,000, 8,000 and 32,561): c = 2 gives 0.791 / 0.807 / 0.826
at n = 2,000 (epsilon 0.5 / 1 / 2), 0.832 / 0.839 / 0.845 at 8,000 and
0.848 / 0.853 / 0.857 at 32,561; c = 1 is within 0.5 point at 8,000 and
more rows but 1-2.5 points lower at 2,000. The package's ``fit`` on Adult is
measured end to end by ``bench_real.py``.
"""

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path

from _common import REPO  # noqa: F401  (puts the checkout on sys.path)

import numpy as np  # noqa: E402
from scipy.special import expit, softmax  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdpol.accounting import gaussian_mu_for_budget  # noqa: E402
from skdpol.datasets import adult_preprocessor, load_adult, row_norm_bound  # noqa: E402

def adult(prep):
    """(X, y +-1, data_norm, n_train) through the package's public preprocessing."""
    data = load_adult()
    pre = adult_preprocessor(bins=prep == "bins").fit(data.X.iloc[:1])  # reads no statistic
    y = np.where(data.y == 1, 1.0, -1.0)
    return pre.transform(data.X), y, row_norm_bound(pre), data.X_train.shape[0]


def digits():
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y.astype(np.float64), 8.0, 1200  # 64 pixels in [0, 1]: norm <= 8


def unit_rows(X, data_norm):
    """The estimators' unit space: x / data_norm clipped to norm 1, then a 1 column."""
    V = X / data_norm
    V /= np.maximum(1.0, np.linalg.norm(V, axis=1, keepdims=True))
    return np.hstack([V, np.ones((V.shape[0], 1))])


def problem(name, n=None, subsample_seed=0, prep="bins"):
    """Train / test in unit space, plus the number of classes (1 = binary)."""
    if name == "income":
        X, y, norm, cut = adult(prep)
    elif name == "digits":
        X, y, norm, cut = digits()
    else:
        raise ValueError(name)
    V = unit_rows(X, norm)
    Vtr, ytr, Vte, yte = V[:cut], y[:cut], V[cut:], y[cut:]
    if n is not None and n < cut:
        pick = np.random.default_rng(subsample_seed).choice(cut, n, replace=False)
        Vtr, ytr = Vtr[pick], ytr[pick]
    k = 1 if name == "income" else int(y.max()) + 1
    return Vtr, ytr, Vte, yte, k


# ------------------------------------------------------------ batched replica
def batched_gd(V, y, k, configs, K, eps, delta, seeds, tail=0.5, dtype=np.float32):
    """Run every (config, seed) of step count K as a column block; return the iterates.

    ``configs``: list of dicts with lr, mu, alpha. Same iteration as
    ``NoisyGradientDescent._round`` (Nesterov, noise N(0, (m 2 L R)^2) on the
    step's gradient sum, m = sqrt(K) / mu_GDP(eps, delta)). Returns the final
    iterates and the tail averages (last ``tail`` fraction of the steps),
    each of shape (n_columns, k, d).
    """
    n, d = V.shape
    R = math.sqrt(2.0)
    L = 1.0 if k == 1 else math.sqrt(2.0)
    cols = [(c, s) for c in configs for s in seeds]
    C = len(cols)
    lr = np.array([c["lr"] for c, _ in cols], dtype=dtype)[:, None, None]
    mu = np.array([c["mu"] for c, _ in cols], dtype=dtype)[:, None, None]
    alpha = np.array([c["alpha"] for c, _ in cols], dtype=dtype)[:, None, None]
    m = 0.0 if math.isinf(eps) else math.sqrt(K) / gaussian_mu_for_budget(eps, delta)
    scale = np.float32(m * 2 * L * R)
    rng = np.random.default_rng([int(K), int(1000 * eps)] + [int(s) for s in seeds[:1]])
    Vt = V.astype(dtype)
    W = np.zeros((C, k, d), dtype=dtype)
    Vel = np.zeros_like(W)
    avg = np.zeros_like(W)
    start = int(K * (1 - tail))
    yi = y.astype(np.intp) if k > 1 else y.astype(dtype)
    for step in range(K):
        A = W + mu * Vel
        S = Vt @ A.reshape(C * k, d).T  # (n, C k)
        if k == 1:
            D = -yi[:, None] * expit(-yi[:, None] * S)
        else:
            P = softmax(S.reshape(n, C, k), axis=2)
            P[np.arange(n), :, yi] -= 1.0
            D = P.reshape(n, C * k)
        G = (D.T @ Vt).reshape(C, k, d)
        if scale > 0:
            G += rng.standard_normal(G.shape, dtype=dtype) * scale
        Vel = mu * Vel - lr * (G / n + alpha * A)
        W = W + Vel
        if step >= start:
            avg += W
    avg /= K - start
    return cols, W, avg


def accuracy(W, V, y, k):
    """Test accuracy of each of the stacked models W (C, k, d)."""
    S = V @ W.reshape(-1, V.shape[1]).T.astype(np.float64)
    if k == 1:
        return np.mean(np.sign(S) == y[:, None], axis=0)
    C = W.shape[0]
    return np.mean(np.argmax(S.reshape(-1, C, k), axis=2) == y[:, None].astype(np.intp), axis=0)


def sweep(args):
    Vtr, ytr, Vte, yte, k = problem(args.problem, args.n, prep=args.prep)
    L_smooth = 0.5 if k == 1 else 1.0  # R^2 / 4 logistic, R^2 / 2 multinomial (R^2 = 2)
    configs = [dict(lr=s / L_smooth, mu=mu, alpha=a, lr_scale=s)
               for s, mu, a in itertools.product(args.lr, args.mu, args.alpha)]
    seeds = list(range(args.seeds))
    rows = []
    for eps in args.eps:
        for K in args.K:
            t0 = time.time()
            cols, W, avg = batched_gd(Vtr, ytr, k, configs, K, eps, args.delta, seeds,
                                      tail=args.tail)
            acc_w, acc_a = accuracy(W, Vte, yte, k), accuracy(avg, Vte, yte, k)
            for i, c in enumerate(configs):
                sl = slice(i * len(seeds), (i + 1) * len(seeds))
                rows.append(dict(eps=eps, K=K, lr_scale=c["lr_scale"], mu=c["mu"],
                                 alpha=c["alpha"], last=acc_w[sl].tolist(),
                                 avg=acc_a[sl].tolist()))
            print(f"# eps={eps} K={K}: {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(dict(args=vars(args), rows=rows)))
    if args.table:  # K down, eps across: mean final / mean tail-average accuracy
        for c in configs:
            print(f"# lr_scale={c['lr_scale']} mu={c['mu']} alpha={c['alpha']}  "
                  f"(T = K lr / (1 - mu) = K x {c['lr'] / (1 - c['mu']):g})")
            print("K      " + "  ".join(f"eps={e:<13}" for e in args.eps))
            for K in args.K:
                cells = []
                for e in args.eps:
                    r = next(r for r in rows if r["K"] == K and r["eps"] == e
                             and r["lr_scale"] == c["lr_scale"] and r["mu"] == c["mu"]
                             and r["alpha"] == c["alpha"])
                    cells.append(f"{np.mean(r['last']):.4f}/{np.mean(r['avg']):.4f}")
                print(f"{K:<6} " + "  ".join(f"{x:<17}" for x in cells))
        return
    rows.sort(key=lambda r: -np.mean(r["avg"]))
    for r in rows[:args.top]:
        print(f"eps={r['eps']:<4} K={r['K']:<5} lr={r['lr_scale']:<5} mu={r['mu']:<4} "
              f"alpha={r['alpha']:<7} last={np.mean(r['last']):.4f} (min {min(r['last']):.4f}) "
              f"avg={np.mean(r['avg']):.4f} (min {min(r['avg']):.4f})")


def noise_scale(n, eps, delta, k):
    """nu = 2 L R / (mu_GDP n): the final iterate's noise per coordinate per unit of T."""
    L = 1.0 if k == 1 else math.sqrt(2.0)
    return 2.0 * L * math.sqrt(2.0) / (gaussian_mu_for_budget(eps, delta) * n)


def schedule(c, n, eps, delta, k, lr_scale, mu, k_min, k_max):
    """T = c / nu; K = T (1 - mu) / lr rounded up (lr <= lr_scale / smoothness)."""
    T = c / noise_scale(n, eps, delta, k)
    lr_max = lr_scale / (0.5 if k == 1 else 1.0)
    K = int(min(k_max, max(k_min, math.ceil(T * (1 - mu) / lr_max))))
    return T, K, T * (1 - mu) / K


def sweep_c(args):
    """Accuracy against c = T nu (T = K lr / (1 - mu), the integrated step)."""
    Vtr, ytr, Vte, yte, k = problem(args.problem, args.n, prep=args.prep)
    n = Vtr.shape[0]
    seeds = list(range(args.seeds))
    print(f"# {args.problem} prep={args.prep} n={n} d={Vtr.shape[1]} k={k} mu={args.mu[0]} "
          f"lr_scale={args.lr[0]} alpha={args.alpha[0]} alpha_T={args.alpha_T} seeds={args.seeds}; "
          "cells: mean final / mean tail-average accuracy [K]")
    print("c      " + "  ".join(f"eps={e:<19}" for e in args.eps))
    for c in args.c:
        cells = []
        for eps in args.eps:
            T, K, lr = schedule(c, n, eps, args.delta, k, args.lr[0], args.mu[0],
                                args.k_min, args.k_max)
            alpha = args.alpha[0] if args.alpha_T is None else args.alpha_T / T
            cfg = dict(lr=lr, mu=args.mu[0], alpha=alpha)
            _, W, avg = batched_gd(Vtr, ytr, k, [cfg], K, eps, args.delta, seeds, args.tail)
            a, b = accuracy(W, Vte, yte, k), accuracy(avg, Vte, yte, k)
            cells.append(f"{a.mean():.4f}/{b.mean():.4f} [{K}]")
        print(f"{c:<6} " + "  ".join(f"{x:<23}" for x in cells), flush=True)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("sweep")
    p.add_argument("--problem", default="income", choices=["income", "digits"])
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--prep", default="bins", choices=["linear", "bins"])
    p.add_argument("--eps", type=float, nargs="+", default=[1.0])
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--K", type=int, nargs="+", default=[50, 100, 200, 400])
    p.add_argument("--lr", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    p.add_argument("--mu", type=float, nargs="+", default=[0.0, 0.5, 0.9])
    p.add_argument("--alpha", type=float, nargs="+", default=[0.0, 1e-3, 1e-2])
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--tail", type=float, default=0.5)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--out", default=None)
    p.add_argument("--table", action="store_true")
    p.add_argument("--alpha-T", type=float, default=None)
    p.add_argument("--c", type=float, nargs="+", default=None)
    p.add_argument("--k-min", type=int, default=10)
    p.add_argument("--k-max", type=int, default=4000)
    args = parser.parse_args()
    with threadpool_limits(1):
        (sweep_c if args.c else sweep)(args)


if __name__ == "__main__":
    main()
