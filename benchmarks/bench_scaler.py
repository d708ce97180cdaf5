"""Does a private StandardScaler help PrivateOnlineRegressor.fit on wine quality?

UCI Wine Quality (white), a random 80/20 split per seed, test R^2 of
``PrivateOnlineRegressor.fit`` (defaults; labels centred on the public 0-10
scale, y - 5, y_bound = 5) behind four preprocessings, all with one total
budget epsilon = 1 (delta = 1e-5) for everything that reads the rows:

* public ranges: ``wine_quality_preprocessor()`` (each column's public range
  to [0, 1]; reads no data), model epsilon 1, data_norm sqrt(11);
* oracle: scikit-learn's non-private ``StandardScaler`` fitted on the
  training rows (NOT private: an upper reference), model epsilon 1;
* private: ``PrivateStandardScaler(epsilon=e_s, bounds=public ranges)``
  then the model at epsilon 1 - e_s (basic composition: the two releases
  together cost at most epsilon 1; the ledger's composed total, lower, is
  printed too).

Standardised rows need a data_norm: ``3 sqrt(11)`` (three standard
deviations per column, a public rule; the model clips longer rows) for the
oracle and the private scaler, and for comparison the bound
``row_norm_bound`` states from the scaler's parameters (sqrt(11) / min_scale).
Cells: median [IQR] over seeds (the split and the noise).

    python benchmarks/bench_scaler.py            # writes docs/benchmarks/scaler.md
    python benchmarks/bench_scaler.py --quick --out /tmp/scaler.md
"""

import math
import os
import tempfile
import warnings

from _common import docstring_page, md_table, parse_report_args, write_report

import numpy as np  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from skdpol import PrivacyLedger, PrivateOnlineRegressor  # noqa: E402
from skdpol.datasets import WINE_QUALITY_RANGES, load_wine_quality, wine_quality_preprocessor  # noqa: E402
from skdpol.preprocessing import PrivateStandardScaler, row_norm_bound  # noqa: E402

DELTA = 1e-5
D = len(WINE_QUALITY_RANGES)
BOUNDS = (np.array([lo for lo, _, _ in WINE_QUALITY_RANGES.values()]),
          np.array([hi for _, hi, _ in WINE_QUALITY_RANGES.values()]))
THREE_SD = 3 * math.sqrt(D)


def configs():
    """(name, scaler epsilon or None, preprocessing factory, model data_norm)."""
    out = [("public ranges -> [0, 1]", None, wine_quality_preprocessor, math.sqrt(D)),
           ("oracle StandardScaler (non-private)", None, StandardScaler, THREE_SD)]
    for e_s in (0.1, 0.2, 0.5):
        out.append((f"PrivateStandardScaler eps {e_s:g} + model eps {1 - e_s:g}", e_s,
                    None, THREE_SD))
    stated = row_norm_bound(PrivateStandardScaler(bounds=BOUNDS))
    out.append((f"PrivateStandardScaler eps 0.2 + model eps 0.8, data_norm = stated "
                f"{stated:.1f}", 0.2, None, stated))
    return out


def run(seed, config, ledger_path):
    name, e_s, factory, data_norm = config
    data = load_wine_quality()
    X_train, X_test, y_train, y_test = train_test_split(
        data.X, data.y - data.y_offset, test_size=0.2, random_state=seed)
    if e_s is None:
        pre, e_model = factory(), 1.0
    else:
        pre = PrivateStandardScaler(epsilon=e_s, bounds=BOUNDS, ledger=ledger_path,
                                    random_state=seed)
        e_model = 1.0 - e_s
    model = PrivateOnlineRegressor(epsilon=e_model, delta=DELTA, data_norm=data_norm,
                                   y_bound=data.y_bound, random_state=seed,
                                   ledger=ledger_path if e_s is not None else None)
    pipe = make_pipeline(pre, model).fit(X_train.to_numpy() if e_s is not None else X_train,
                                         y_train)
    X_eval = X_test.to_numpy() if e_s is not None else X_test
    return pipe.score(X_eval, y_test)


def main():
    args = parse_report_args(__doc__)
    seeds = range(1 if args.quick else 10)
    rows = []
    with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
        warnings.simplefilter("ignore", UserWarning)
        for config in configs():
            scores, totals = [], []
            for seed in seeds:
                path = os.path.join(tmp, f"{seed}-{len(rows)}.sqlite")
                scores.append(run(seed, config, path))
                if config[1] is not None:
                    totals.append(PrivacyLedger(path).spent(delta=DELTA).epsilon)
            q1, med, q3 = np.percentile(scores, [25, 50, 75])
            total = f"{np.max(totals):.3f} (ledger)" if totals else "1"
            rows.append((config[0], f"{config[3]:.2f}", f"{med:.3f} [{q1:.3f}, {q3:.3f}]", total))
            print(rows[-1], flush=True)
    text = docstring_page(
        "Private standardisation on wine quality", __doc__,
        md_table(["preprocessing and budget split", "model data_norm", "test R^2",
                  "total epsilon at delta 1e-5"], rows), len(seeds), "bench_scaler.py")
    write_report(text, args, "scaler.md")


if __name__ == "__main__":
    main()
