"""Research behind the defaults of ``skdpol.online.noisy_gd_release`` (``fit``'s noisy GD).

Data (public preprocessing only, built from the schema in ../shared/data/README.md):

* UCI Adult, ``income`` (binary): the 8 categorical columns one-hot encoded
  with the UCI category lists (a missing cell is its own category,
  constant imputation), the 6 numeric columns mapped linearly to [0, 1] by
  public ranges, so every row has norm <= sqrt(14) = ``data_norm``
  (``--prep bins`` adds one-hot bins of 5 numeric columns at round public
  edges: 159 columns, data_norm sqrt(19)). Train = the first 32,561 rows, test =
  the rest.
* Adult ``education`` grouped into 7 classes (multinomial), from the other
  columns (education and education_num left out), same split.
* sklearn's bundled ``load_digits`` (10 classes, pixels / 16, data_norm 8,
  first 1,200 rows train).
* UCI wine quality (white), regression: the 11 columns mapped by public
  ranges to [0, 1], data_norm sqrt(11), label (quality - 6) / 3 (y_bound 1
  in units of 3 quality points), first 3,918 rows train.

Unit space (what the estimators learn in): v = [x / data_norm clipped to
norm 1, 1], so ||v|| <= R = sqrt(2); labels +-1 or class indices.

One sub-command, ``sweep`` (each run under ~5 minutes on one core). It runs a
batched replica of ``NoisyGradientDescent``'s iteration (float32, every
configuration of one step count K as a column of one matrix product) and
prints the test accuracy of each configuration. With ``--c`` it sweeps the
constant c of ``skdpol.online.gradient_schedule`` (T = c / nu) instead of K:

    python benchmarks/bench_noisy_gd.py sweep --problem income --prep bins --eps 1 --seeds 3 \
        --K 100 200 400 --lr 1 2 --mu 0.9 --alpha 0
    python benchmarks/bench_noisy_gd.py sweep --problem income --prep bins --n 2000 \
        --eps 0.5 1 2 --seeds 3 --lr 1 --mu 0.9 --alpha 0 --c 0.5 1 2 4 8 16 --k-max 1000

Measured (2026-11-23, bins, 3 seeds, final iterate): c = 2 gives 0.789 / 0.804 /
0.825 at n = 2,000 (epsilon 0.5 / 1 / 2), 0.830 / 0.838 / 0.845 at 8,000 and
0.848 / 0.853 / 0.856 at 32,561; c = 1 is within 0.5 point except at n = 2,000.
The package's ``fit`` on Adult is measured end to end by ``bench_real.py``.
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
import pandas as pd  # noqa: E402
from scipy.special import expit, softmax  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from skdpol.accounting import gaussian_mu_for_budget  # noqa: E402
from skdpol.datasets import data_home  # noqa: E402

DATA = data_home()  # the project's shared data folder (nothing is downloaded)
N_TRAIN_ADULT = 32_561

# --------------------------------------------------------------------- data
ADULT_CATEGORIES = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
                  "Doctorate", "5th-6th", "Preschool"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native_country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
        "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
        "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
}
# public ranges (what one knows without the rows), mapped linearly to [0, 1]
ADULT_RANGES = {"age": (17, 90), "fnlwgt": (10_000, 1_500_000), "education_num": (1, 16),
                "capital_gain": (0, 99_999), "capital_loss": (0, 4_356),
                "hours_per_week": (1, 99)}
# prep="bins": also one-hot bins of the numeric columns at round public edges
ADULT_BINS = {"age": [25, 30, 35, 40, 45, 50, 55, 60, 65],
              "hours_per_week": [20, 35, 40, 41, 50, 60],
              "capital_gain": [1, 3000, 5000, 7000, 10000, 20000],
              "capital_loss": [1, 1500, 1800, 2000, 2500],
              "education_num": list(range(2, 17))}
EDUCATION_7 = {  # education grouped into 7 classes
    "Preschool": 0, "1st-4th": 0, "5th-6th": 0, "7th-8th": 0,
    "9th": 1, "10th": 1, "11th": 1, "12th": 1, "HS-grad": 2, "Some-college": 3,
    "Assoc-acdm": 4, "Assoc-voc": 4, "Bachelors": 5, "Masters": 6, "Prof-school": 6,
    "Doctorate": 6,
}
WINE_RANGES = {  # public plausible ranges of the physico-chemical columns
    "fixed_acidity": (3, 15), "volatile_acidity": (0, 2), "citric_acid": (0, 2),
    "residual_sugar": (0, 70), "chlorides": (0, 0.4), "free_sulfur_dioxide": (0, 300),
    "total_sulfur_dioxide": (0, 450), "density": (0.98, 1.04), "pH": (2.5, 4.0),
    "sulphates": (0, 1.2), "alcohol": (8, 15),
}


def _map_range(values, lo, hi):
    values = np.asarray(values, dtype=np.float64)
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0)


def _one_hot(column, categories):
    """One-hot over the public categories plus 'missing' (constant imputation)."""
    values = column.astype(object).where(column.notna(), "missing").to_numpy()
    cats = list(categories) + ["missing"]
    index = {c: i for i, c in enumerate(cats)}
    codes = np.array([index.get(v, -1) for v in values])
    if np.any(codes < 0):  # a schema check, not a statistic: the lists are the schema
        raise ValueError(f"values outside the public categories of {column.name}")
    out = np.zeros((len(values), len(cats)))
    out[np.arange(len(values)), codes] = 1.0
    return out


def _bins(column, edges):
    codes = np.searchsorted(edges, column.to_numpy(), side="right")
    out = np.zeros((len(codes), len(edges) + 1))
    out[np.arange(len(codes)), codes] = 1.0
    return out


def adult(target="income", prep="linear"):
    """(X, y, data_norm) in data space, rows in file order; y +-1 or class indices."""
    df = pd.read_csv(DATA / "adult.csv.gz")
    drop = {"education", "education_num"} if target == "education7" else set()
    blocks = [_map_range(df[c], lo, hi)[:, None]
              for c, (lo, hi) in ADULT_RANGES.items() if c not in drop]
    if prep == "bins":
        blocks += [_bins(df[c], e) for c, e in ADULT_BINS.items() if c not in drop]
    blocks += [_one_hot(df[c], cats) for c, cats in ADULT_CATEGORIES.items() if c not in drop]
    X = np.hstack(blocks)
    n_blocks = len(blocks)  # each block contributes <= 1 to the squared norm
    if target == "income":
        y = np.where(df["income"].astype(str).str.startswith(">50K"), 1.0, -1.0)
    else:
        y = df["education"].map(EDUCATION_7).to_numpy(dtype=np.float64)
    return X, y, math.sqrt(n_blocks)


def digits():
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y.astype(np.float64), 8.0  # 64 pixels in [0, 1]: norm <= 8


def wine():
    df = pd.read_csv(DATA / "winequality_white.csv.gz")
    cols = [c for c in df.columns if c != "quality"]
    norm = {c.replace(" ", "_"): c for c in cols}
    X = np.column_stack([_map_range(df[norm[k]], lo, hi) for k, (lo, hi) in WINE_RANGES.items()])
    return X, df["quality"].to_numpy(dtype=np.float64), math.sqrt(len(WINE_RANGES))


def unit_rows(X, data_norm):
    """The estimators' unit space: x / data_norm clipped to norm 1, then a 1 column."""
    V = X / data_norm
    V /= np.maximum(1.0, np.linalg.norm(V, axis=1, keepdims=True))
    return np.hstack([V, np.ones((V.shape[0], 1))])


def problem(name, n=None, subsample_seed=0, prep="linear"):
    """Train / test in unit space, plus the number of classes (1 = binary)."""
    if name in ("income", "education7"):
        X, y, norm = adult(name, prep)
        cut = N_TRAIN_ADULT
    elif name == "digits":
        X, y, norm = digits()
        cut = 1200
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
    p.add_argument("--problem", default="income")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--prep", default="linear", choices=["linear", "bins"])
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
