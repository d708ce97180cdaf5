"""The regressor's algorithms on one easy stream: the default against the seeds' gradient family.

A 3-feature stream, rows N(0, I), labels x.[1, 2, 3] + N(0, 0.1^2),
20,000 rows fed to ``partial_fit`` in chunks of 5,000 with
``horizon=20000``, ``data_norm=4``, ``y_bound=10`` and the default
``alpha``; test R^2 on 5,000 fresh noiseless rows (0 is predicting the
mean). Each gradient algorithm runs with rounds of 1, 20 and 100 rows (igd
refuses rounds of more than one row on the squared loss), at epsilon = inf
(no noise: the algorithm alone) and epsilon = 1; the default
(``algorithm="auto"``, ftrl-momentum) and ``"ftrl"`` also with their own
rounds (``batch_size="auto"``). Cells are the median [quartiles] over seeds
of the estimator's noise.

Why ftal, giga, igd and mi-ogd fail: they run on the squared loss, and in
unit space the model ball has radius 1 / sqrt(alpha) (31.6 at the default
alpha = 1e-3). ftal and giga step like 1 / (alpha t), so with fewer than
about 1 / alpha rounds their iterates overshoot to the ball's edge even
without noise; with noise, the gradient bound, which grows like
1 / sqrt(alpha), sends every one of them far from the optimum at any round
count. The regressor warns (``UserWarning``) when one of them is chosen.
``"ftrl"`` did the same (R^2 -570 to -7,000 here) until it moved to Huber's
loss clipped at ``residual_bound``, a first regulariser sigma_0 = b R^2 / 2
(its step on a round's mean is at most 2 / R^2) and averaged iterates
(skdpol/online/_ftal.py); it no longer warns.

    python benchmarks/bench_regressor_algorithms.py          # writes docs/benchmarks/regressor_algorithms.md
    python benchmarks/bench_regressor_algorithms.py --quick  # 1 seed, no file
"""

import math
import warnings

import numpy as np
from _common import docstring_page, md_table, median_iqr, report_parser, write_report

from skdpol import PrivateOnlineRegressor

N, CHUNK, COEF = 20_000, 5_000, np.array([1.0, 2.0, 3.0])


def stream(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 3))
    y = X @ COEF + 0.1 * rng.standard_normal(N)
    Xt = rng.standard_normal((5_000, 3))
    return X, y, Xt, Xt @ COEF


def score(algorithm, batch_size, epsilon, seed, data):
    X, y, Xt, yt = data
    est = PrivateOnlineRegressor(epsilon=epsilon, data_norm=4.0, y_bound=10.0,
                                 algorithm=algorithm, horizon=N, batch_size=batch_size,
                                 random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the warning this table justifies
        for s in range(0, N, CHUNK):
            est.partial_fit(X[s:s + CHUNK], y[s:s + CHUNK])
    return est.score(Xt, yt)


def main():
    args = report_parser(__doc__).parse_args()
    seeds = range(1 if args.quick else 5)
    data = stream()
    cases = [("auto", "auto"), ("ftrl", "auto")] + [
        (a, b) for a in ("ftrl", "ftal", "giga", "igd", "mi-ogd")
        for b in (1, 20, 100) if a != "igd" or b == 1]
    rows = []
    for algorithm, batch in cases:
        cells = [median_iqr([score(algorithm, batch, eps, s, data) for s in seeds])
                 for eps in (math.inf, 1.0)]
        rows.append([f"`{algorithm}`", batch, N // batch if batch != "auto" else "auto", *cells])
        print(rows[-1], flush=True)
    table = md_table(["algorithm", "rows per round", "rounds", "R^2, epsilon = inf",
                      "R^2, epsilon = 1"], rows)
    write_report(docstring_page("The regressor's algorithms on an easy stream", __doc__,
                                table, len(seeds), "bench_regressor_algorithms.py"),
                 args, "regressor_algorithms.md")


if __name__ == "__main__":
    main()
