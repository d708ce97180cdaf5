"""The regressor's default fit against the constant c of its noisy-GD schedule.

``fit`` runs noisy GD on the Huber loss for a public time T = c / nu
(``skdpol.online.gradient_schedule``; nu = 2 C R / (mu_GDP n), K = T (1 - 0.9)
/ lr steps clipped to [10, 400]). T nu is the noise per unit-space coordinate
the iterate collects along a direction the loss does not curve, so c trades
convergence against noise. The classifier's c = 2 (measured on Adult) was
also the regressor's until ``HUBER_SCHEDULE_C``; this script sweeps c by
setting that constant, with every other parameter at the estimator's default.

Tables: scikit-learn's diabetes (353 training rows; bounds read off the
training rows and treated as public, labels centred on the range's middle, as
``bench_utility.py``; delta 1e-5), and wine quality and King County through
their shipped public schemas (``bench_stream.py``'s split and delta 1e-6).
Cells: median [min, max] test R^2 over seeds (random 80/20 splits).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_huber_schedule.py \
        --seeds 5
"""

import argparse
import sys
import time
import warnings

from _common import REPO, command_line, machine_lines, md_table  # noqa: F401

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

import skdpol.online._noisy_gd  # noqa: F401  (the module whose constant is swept)
from proto_streams import load_tables, split
from skdpol import PrivateOnlineRegressor
from skdpol.datasets import data_home

SCHEDULE = sys.modules["skdpol.online._noisy_gd"]
CS = (0.1, 0.2, 0.3, 0.4, 0.5, 1.0, 2.0)
EPSILONS = (0.5, 1.0, 2.0)


def diabetes_table():
    data = load_diabetes()

    def split_seed(seed):
        Xtr, Xte, ytr, yte = train_test_split(data.data, data.target, test_size=0.2,
                                              random_state=seed)
        mid, half = (ytr.min() + ytr.max()) / 2, (ytr.max() - ytr.min()) / 2
        return (Xtr, ytr - mid, Xte, yte - mid,
                float(np.linalg.norm(Xtr, axis=1).max()), half, 1e-5)
    return split_seed


def schema_table(name):
    table = load_tables([name], data_home())[name]

    def split_seed(seed):
        Xtr, ytr, Xte, yte = split(table, seed)
        return Xtr, ytr, Xte, yte, table["data_norm"], table["y_bound"], 1e-6
    return split_seed


def scores(split_seed, eps, seeds):
    out = []
    for seed in seeds:
        Xtr, ytr, Xte, yte, dn, yb, delta = split_seed(seed)
        est = PrivateOnlineRegressor(epsilon=eps, delta=delta, data_norm=dn, y_bound=yb,
                                     random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # delta >= 1/n on diabetes
            est.fit(Xtr, ytr)
        out.append(r2_score(yte, est.predict(Xte)))
    return np.array(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--tables", default="diabetes,wine,kc")
    p.add_argument("--out", help="write the markdown page here")
    args = p.parse_args()
    makers = {"diabetes": diabetes_table, "wine": lambda: schema_table("wine"),
              "kc": lambda: schema_table("kc")}
    default_c, t0, sections = SCHEDULE.HUBER_SCHEDULE_C, time.perf_counter(), []
    for name in args.tables.split(","):
        split_seed, rows = makers[name](), []
        for c in CS:
            SCHEDULE.HUBER_SCHEDULE_C = c
            cells = []
            for eps in EPSILONS:
                r = scores(split_seed, eps, range(args.seeds))
                cells.append(f"{np.median(r):.3f} [{r.min():.3f}, {r.max():.3f}]")
                print(f"{name} c={c:g} eps={eps:g}: {cells[-1]}", flush=True)
            rows.append([f"{c:g}" + (" (default)" if c == default_c else "")] + cells)
        SCHEDULE.HUBER_SCHEDULE_C = default_c
        sections += [f"## {name}", "", md_table(
            ["c"] + [f"fit, epsilon {e:g}" for e in EPSILONS], rows), ""]
    text = "\n".join([
        "# The regressor's noisy-GD schedule: T = c / nu", "",
        __doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0], "",
        f"Produced by `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice "
        f"{command_line('bench_huber_schedule.py')}` in "
        f"{(time.perf_counter() - t0) / 60:.1f} min ({args.seeds} seeds).", "",
        *machine_lines(), "", *sections])
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
