"""How far is PrivateOnlineRegressor.fit from Ridge on wine quality, and why?

Issue 13 asks for a private ``fit`` within 0.03 of R^2 of non-private
``Ridge`` on wine quality (white) at epsilon = 1. This script measures what
the library's one-release regressors reach there and where the gap closes:
UCI Wine Quality (white), a random 80/20 split per seed (3,918 training rows,
11 columns), labels centred on the public 0-10 scale (y - 5, ``y_bound = 5``),
delta = 1e-5, test R^2 median [IQR] over seeds (split and noise).

Rows:

* the default ``fit`` (noisy gradient descent on the Huber loss) behind the
  public-range preprocessing (``wine_quality_preprocessor()``, each column to
  [0, 1], ``data_norm = sqrt(11)``), at several epsilons;
* ``algorithm="ftl"`` (one noisy copy of the sufficient statistics X^T X,
  X^T y: the SSP of diffprivlib's LinearRegression, with the library's
  eigenvalue floor) and larger ``residual_bound``;
* the same public ranges mapped to [-1, 1] instead of [0, 1] (a public
  centring: same norm bound, twice the spread);
* non-private references: ``Ridge`` on all columns, and on the alcohol
  column alone (the best single column).

    python benchmarks/bench_wine_gap.py            # writes docs/benchmarks/wine_gap.md
    python benchmarks/bench_wine_gap.py --quick --out /tmp/wine_gap.md
"""

import math
import warnings

from _common import docstring_page, md_table, median_iqr, parse_report_args, write_report

from sklearn.base import clone  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402

from skdpol import PrivateOnlineRegressor  # noqa: E402
from skdpol.datasets import load_wine_quality, wine_quality_preprocessor  # noqa: E402

DELTA = 1e-5
EPSILONS = (1.0, 2.0, 4.0, 8.0, math.inf)


def _centred():
    """The public ranges to [-1, 1]: still norm <= sqrt(11), twice the spread."""
    return make_pipeline(wine_quality_preprocessor(),
                         FunctionTransformer(lambda Z: 2.0 * Z - 1.0))


def _alcohol():
    return FunctionTransformer(lambda X: X[["alcohol"]].to_numpy())


# (row name, preprocessing factory, regressor kwargs or None for Ridge, epsilons)
CONFIGS = [
    ("default fit, public ranges [0, 1]", wine_quality_preprocessor, {}, EPSILONS),
    ('algorithm="ftl" (noisy X^T X, X^T y)', wine_quality_preprocessor,
     dict(algorithm="ftl"), (1.0, math.inf)),
    ('algorithm="ftl", alpha=1e-4', wine_quality_preprocessor,
     dict(algorithm="ftl", alpha=1e-4), (1.0, math.inf)),
    ("default fit, residual_bound=0.25", wine_quality_preprocessor,
     dict(residual_bound=0.25), (1.0, math.inf)),
    ("default fit, residual_bound=0.5", wine_quality_preprocessor,
     dict(residual_bound=0.5), (1.0, math.inf)),
    ("default fit, public ranges centred to [-1, 1]", _centred, {}, EPSILONS),
    ("Ridge (non-private), all columns", wine_quality_preprocessor, None, (math.inf,)),
    ("Ridge (non-private), alcohol only", _alcohol, None, (math.inf,)),
]


def score(seed, factory, kwargs, eps, data):
    X_train, X_test, y_train, y_test = train_test_split(
        data.X, data.y - data.y_offset, test_size=0.2, random_state=seed)
    if kwargs is None:
        model = Ridge(alpha=1e-3)
    else:
        model = PrivateOnlineRegressor(epsilon=eps, delta=DELTA, data_norm=math.sqrt(11),
                                       y_bound=data.y_bound, random_state=seed, **kwargs)
    pipe = make_pipeline(clone(factory()), model).fit(X_train, y_train)
    return pipe.score(X_test, y_test)


def main():
    args = parse_report_args(__doc__)
    seeds = range(1 if args.quick else 5)
    data = load_wine_quality()
    header = ["method"] + [f"eps = {e:g}" for e in EPSILONS]
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, factory, kwargs, epsilons in CONFIGS:
            cells = []
            for eps in EPSILONS:
                if eps not in epsilons:
                    cells.append("-")
                    continue
                cells.append(median_iqr([score(s, factory, kwargs, eps, data) for s in seeds]))
            rows.append([name, *cells])
            print(rows[-1], flush=True)
    text = docstring_page("Wine quality: the private linear fit against Ridge", __doc__,
                          md_table(header, rows), len(seeds), "bench_wine_gap.py")
    write_report(text, args, "wine_gap.md")


if __name__ == "__main__":
    main()
