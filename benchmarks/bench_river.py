"""skdpol's streams against River (online, not private) on the real data sets.

River (https://riverml.xyz) is the reference library for online learning in
Python; it has no privacy. This script streams the same rows, behind the same
public preprocessing built from the schema (``skdpol.datasets.adult_preprocessor``,
``wine_quality_preprocessor``: it reads no statistic of the data), through

* River's ``linear_model.LogisticRegression`` / ``LinearRegression`` with
  their defaults, one pass, ``learn_many`` on each chunk (River's mini-batch
  path; its ``learn_one`` loop over the same rows is shown for throughput);
* skdpol's ``PrivateOnlineLogistic`` / ``PrivateOnlineRegressor``
  ``partial_fit`` at their defaults (``horizon`` = rows) at epsilon 1 and
  without noise (epsilon = inf), delta = 1e-5;
* scikit-learn's ``SGDClassifier`` / ``SGDRegressor`` ``partial_fit``.

Chunks of 1,000 rows (Adult) and 500 (wine, labels centred on the public
0-10 scale's midpoint), test accuracy / R^2 on held-out rows, 3 seeds (the
wine split and every model's seed), and the throughput of each method
relative to River's ``learn_many`` measured in the same run (rows per second
over River's, median over seeds): the machines are shared, so only ratios
are comparable. Needs ``pip install river`` (the ``bench`` extra).

    python benchmarks/bench_river.py            # writes docs/benchmarks/river.md
    python benchmarks/bench_river.py --quick    # 1 seed, prints only
"""

import time
import warnings

from _common import command_line, machine_lines, md_table, median_iqr, report_parser, write_report

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.linear_model import SGDClassifier, SGDRegressor  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from skdpol import PrivacyLeakWarning, PrivateOnlineLogistic, PrivateOnlineRegressor  # noqa: E402
from skdpol.datasets import (  # noqa: E402
    adult_preprocessor,
    load_adult,
    load_wine_quality,
    row_norm_bound,
    wine_quality_preprocessor,
)

DELTA = 1e-5
CHUNK = {"adult": 1_000, "wine": 500}


def chunks(n, size):
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def river_stream(model, X, y, size, one_by_one=False):
    """One pass of River: ``learn_many`` per chunk, or ``learn_one`` per row."""
    columns = [f"x{i}" for i in range(X.shape[1])]
    for s, e in chunks(X.shape[0], size):
        frame = pd.DataFrame(X[s:e], columns=columns)
        target = pd.Series(y[s:e])
        if one_by_one:
            for row, label in zip(frame.to_dict("records"), target):
                model.learn_one(row, label)
        else:
            model.learn_many(frame, target)
    return model, columns


def river_predict(model, columns, X):
    return np.asarray(model.predict_many(pd.DataFrame(X, columns=columns)))


def skdpol_stream(est, X, y, size, **fit_params):
    for s, e in chunks(X.shape[0], size):
        est.partial_fit(X[s:e], y[s:e], **fit_params)
    return est


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def adult_arrays():
    adult = load_adult()
    pre = adult_preprocessor()
    fitted = clone(pre).fit(adult.X_train.iloc[:1])  # reads no statistic
    return (fitted.transform(adult.X_train), np.asarray(adult.y_train),
            fitted.transform(adult.X_test), np.asarray(adult.y_test),
            row_norm_bound(pre), adult.classes)


def wine_arrays(seed):
    wine = load_wine_quality()
    pre = wine_quality_preprocessor()
    Xtr, Xte, ytr, yte = train_test_split(wine.X, wine.y, test_size=0.2, random_state=seed)
    fitted = clone(pre).fit(Xtr.iloc[:1])
    return (fitted.transform(Xtr), np.asarray(ytr - wine.y_offset, dtype=float),
            fitted.transform(Xte), np.asarray(yte - wine.y_offset, dtype=float),
            row_norm_bound(pre), wine.y_bound)


def r2(y, pred):
    return 1.0 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)


def run(seeds):
    from river import linear_model as rlm

    rows = []  # (dataset, method, seed, score, seconds)
    Xtr, ytr, Xte, yte, dn, classes = adult_arrays()
    size = CHUNK["adult"]
    for seed in seeds:
        model, sec = timed(lambda: river_stream(rlm.LogisticRegression(), Xtr, ytr == 1, size))
        pred = river_predict(*model, Xte)
        rows.append(("adult", "River LogisticRegression, learn_many", seed,
                     np.mean(pred == (yte == 1)), sec))
        model, sec = timed(lambda: river_stream(rlm.LogisticRegression(), Xtr, ytr == 1, size,
                                                one_by_one=True))
        pred = river_predict(*model, Xte)
        rows.append(("adult", "River LogisticRegression, learn_one", seed,
                     np.mean(pred == (yte == 1)), sec))
        for eps in (1.0, np.inf):
            est = PrivateOnlineLogistic(epsilon=eps, delta=DELTA, data_norm=dn,
                                        horizon=Xtr.shape[0], random_state=seed)
            est, sec = timed(lambda: skdpol_stream(est, Xtr, ytr, size, classes=classes))
            rows.append(("adult", f"skdpol PrivateOnlineLogistic.partial_fit, epsilon={eps:g}",
                         seed, est.score(Xte, yte), sec))
        sgd, sec = timed(lambda: skdpol_stream(SGDClassifier(loss="log_loss", random_state=seed),
                                               Xtr, ytr, size, classes=classes))
        rows.append(("adult", "SGDClassifier(loss='log_loss').partial_fit", seed,
                     sgd.score(Xte, yte), sec))
        print(f"[adult] seed {seed} done", flush=True)
    size = CHUNK["wine"]
    for seed in seeds:
        Xtr, ytr, Xte, yte, dn, yb = wine_arrays(seed)
        model, sec = timed(lambda: river_stream(rlm.LinearRegression(), Xtr, ytr, size))
        rows.append(("wine", "River LinearRegression, learn_many", seed,
                     r2(yte, river_predict(*model, Xte)), sec))
        model, sec = timed(lambda: river_stream(rlm.LinearRegression(), Xtr, ytr, size,
                                                one_by_one=True))
        rows.append(("wine", "River LinearRegression, learn_one", seed,
                     r2(yte, river_predict(*model, Xte)), sec))
        for eps in (1.0, np.inf):
            est = PrivateOnlineRegressor(epsilon=eps, delta=DELTA, data_norm=dn, y_bound=yb,
                                         horizon=Xtr.shape[0], random_state=seed)
            est, sec = timed(lambda: skdpol_stream(est, Xtr, ytr, size))
            rows.append(("wine", f"skdpol PrivateOnlineRegressor.partial_fit, epsilon={eps:g}",
                         seed, est.score(Xte, yte), sec))
        sgd, sec = timed(lambda: skdpol_stream(SGDRegressor(random_state=seed), Xtr, ytr, size))
        rows.append(("wine", "SGDRegressor.partial_fit", seed, sgd.score(Xte, yte), sec))
        print(f"[wine] seed {seed} done", flush=True)
    return rows


def table(rows, dataset, metric):
    methods = list(dict.fromkeys(r[1] for r in rows if r[0] == dataset))
    reference = [r for r in rows if r[0] == dataset and r[1].endswith("learn_many")]
    base = {r[2]: r[4] for r in reference}
    out = []
    for m in methods:
        mine = [r for r in rows if r[0] == dataset and r[1] == m]
        ratio = [base[r[2]] / r[4] for r in mine if r[4] > 0]
        out.append((m, median_iqr([r[3] for r in mine]), f"{np.median(ratio):.2f}x",
                    "-" if "skdpol" not in m else ("1 (delta 1e-5)" if "inf" not in m
                                                   else "inf (no noise)")))
    return md_table(("method", f"test {metric}, median [q25, q75]",
                     "throughput vs River learn_many (same seed, same run)", "epsilon"), out)


def main():
    parser = report_parser(__doc__)
    args = parser.parse_args()
    seeds = [0] if args.quick else [0, 1, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # public bounds only
        rows = run(seeds)
    text = "\n".join([
        "# skdpol against River (online, non-private) on real data",
        "",
        f"Produced by `{command_line('bench_river.py')}`; see the script's docstring for "
        "the set-up (public preprocessing from the schema, one pass in chunks, defaults).",
        "",
        *machine_lines(),
        "",
        "## Adult (32,561 training rows in chunks of 1,000; accuracy on 16,281 test rows)",
        "",
        table(rows, "adult", "accuracy"),
        "",
        "## Wine quality (3,918 training rows in chunks of 500; R^2 on 980 test rows)",
        "",
        table(rows, "wine", "R^2"),
        "",
        "River's defaults (plain SGD, learning rate 0.01, no feature scaling beyond the "
        "public preprocessing) are shown as they are, as for scikit-learn's SGD: tuning "
        "either on the test rows would not be a fair comparison with a private model "
        "that cannot be tuned on its data for free (docs/guide/model_selection.md).",
        "",
    ])
    write_report(text, args, "river.md")


if __name__ == "__main__":
    main()
