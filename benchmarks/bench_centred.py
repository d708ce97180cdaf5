"""The regressor's centred stream against today's on the generated streams.

``algorithm="auto"``'s stream (``"ftrl-momentum"``) centres its rows on a
private mean of its first rows (``skdpol/online/_centred.py``) where a
public rule allows. This bench runs the default regressor on the streams
issue 31's acceptance does not cover, each twice in the same run on the
same rows and seeds: as shipped (centred where the rule allows) and with
the centring switched off (today's stream), R^2 on held-out rows:

* the generated stream of ``bench_momentum_rounds.py`` (200,000 rows,
  d = 90, chunks of 10,000) and its "rows near one direction" (d = 5);
* the generated regression of ``bench_utility.py`` (100,000 rows, d = 10)
  and diabetes (353 training rows: the rule does not centre there), in
  10 chunks, labels centred on the public range's midpoint as there.

(The wide rows, d = 100 and 1,000 over 100,000 rows, are
``bench_wide.py --widths 100,1000 --kinds regressor``.)

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_centred.py --seeds 3
"""

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_momentum_rounds import dominant_direction  # noqa: E402
from bench_speed_memory import _test_rows, make_stream, public_bounds  # noqa: E402

from skdpol import PrivateOnlineRegressor  # noqa: E402
from skdpol.datasets import make_online_regression  # noqa: E402
from skdpol.online import _factory  # noqa: E402
from skdpol.online._centred import CentredMomentumFTRL  # noqa: E402


def streams(seed):
    """(label, X, y, X_test, y_test, data_norm, y_bound, chunk, delta, offset)."""
    n = 200_000
    X, y, coef = make_stream(n, 90, seed=seed)
    Xt, yt = _test_rows(coef, seed)
    dn, yb = public_bounds(90, coef, 0.1)
    yield "generated (200,000 rows, d = 90)", X, y, Xt, yt, dn, yb, 10_000, 1 / n**1.1, 0.0
    Xa, ya = dominant_direction(n, seed=seed)
    yield ("rows near one direction (200,000 rows, d = 5)", Xa, ya, Xa[:20_000], ya[:20_000],
           1.0, 2.0, 10_000, 1 / n**1.1, 0.0)
    synth = make_online_regression(100_000, n_features=10, noise=0.1, random_state=seed)
    diabetes = load_diabetes()
    for label, Xs, ys in (("bench_utility generated (80,000 rows, d = 10)", synth.X, synth.y),
                          ("diabetes (353 rows, d = 10)", diabetes.data, diabetes.target)):
        Xtr, Xte, ytr, yte = train_test_split(Xs, ys, test_size=0.2, random_state=seed)
        mid = (ytr.min() + ytr.max()) / 2
        yield (label, Xtr, ytr - mid, Xte, yte, float(np.linalg.norm(Xtr, axis=1).max()),
               (ytr.max() - ytr.min()) / 2, -(-len(Xtr) // 10), 1e-5, mid)


def one_pass(X, y, Xt, yt, dn, yb, chunk, delta, offset, eps, seed):
    est = PrivateOnlineRegressor(epsilon=eps, delta=delta, data_norm=dn, y_bound=yb,
                                 horizon=len(X), random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lo in range(0, len(X), chunk):
            est.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk])
    centred = isinstance(est._stream.algorithm, CentredMomentumFTRL)
    return r2_score(yt, est.predict(Xt) + offset), centred


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    rows = {}
    rule = _factory.centres
    for seed in range(args.seeds):
        for label, *data in streams(seed):
            for eps in (1.0, math.inf):
                ours, centred = one_pass(*data, eps, seed)
                _factory.centres = lambda *a: False
                try:
                    todays, _ = one_pass(*data, eps, seed)
                finally:
                    _factory.centres = rule
                rows.setdefault((label, eps), []).append((ours, todays, centred))
                print(f"{label} eps={eps:g} seed={seed}: centred={centred} "
                      f"{ours:.4f} vs today's {todays:.4f}", flush=True)
    print("\n| stream | epsilon | centred? | as shipped | today's | paired change |")
    print("|---|---|---|---|---|---|")
    for (label, eps), v in rows.items():
        a = np.array(v, dtype=float)
        cell = [f"{np.median(c):.4f} [{c.min():.4f}, {c.max():.4f}]" for c in (a[:, 0], a[:, 1])]
        change = a[:, 0] - a[:, 1]
        print(f"| {label} | {eps:g} | {int(a[:, 2].sum())} / {len(a)} | {cell[0]} | {cell[1]} | "
              f"{np.median(change):+.4f} [{change.min():+.4f}, {change.max():+.4f}] |")


if __name__ == "__main__":
    main()
