"""``release_every`` and the end of a stream on two real tables (issue 31).

One pass of ``partial_fit`` behind the public preprocessing, ``horizon`` =
the training rows, epsilon = 1, delta = 1e-6: Adult (PrivateOnlineLogistic,
chunks of 1,000) and white wine quality (PrivateOnlineRegressor, chunks of
500, 80/20 split by seed), for ``release_every`` = 1, 2, 4, 8. For each: the
test score of the final model (median and range over the seeds), the models
published, the rows the final model learned, and the noise std of the final
release relative to ``release_every=1`` (per unit of sensitivity; a public
quantity). ``main`` before issue 31 dropped the last incomplete round at the
horizon: the column "dropped before" counts those rows (the rows of the
horizon's call that completed no round).

    python benchmarks/bench_release_every.py [--seeds 3] [--data DIR]

Writes ``docs/benchmarks/release_every.md``.
"""

import argparse
import time
import warnings

from _common import REPO, command_line, machine_lines, md_table

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.datasets import (adult_preprocessor, load_adult, load_wine_quality,
                             row_norm_bound, wine_quality_preprocessor)

OUT = REPO / "docs" / "benchmarks" / "release_every.md"
KS = (1, 2, 4, 8)
DELTA = 1e-6


def _one_pass(pre, est, X, y, chunk, **fit_params):
    pre = clone(pre).fit(X.iloc[:chunk])  # public preprocessing: reads no statistic
    for start in range(0, X.shape[0], chunk):
        est.partial_fit(pre.transform(X.iloc[start:start + chunk]), y[start:start + chunk],
                        **fit_params)
    return pre, est


def _noise_unit(est):
    algo = est._stream.algorithm  # curator state, read for a public number only
    tree = algo._tree
    return float(tree.noise_std_at(algo.n_rounds)[0] / tree.sensitivity)


def run(data_dir, seeds):
    rows = []
    adult, wine = load_adult(data_dir), load_wine_quality(data_dir)
    for table, k_rows in (("adult", adult), ("wine", wine)):
        results = {k: [] for k in KS}
        for seed in seeds:
            if table == "adult":
                pre = adult_preprocessor()
                Xtr, ytr, Xte, yte = k_rows.X_train, k_rows.y_train, k_rows.X_test, k_rows.y_test
                chunk, fit_params = 1_000, {"classes": k_rows.classes}
            else:
                pre = wine_quality_preprocessor()
                Xtr, Xte, ytr, yte = train_test_split(k_rows.X, k_rows.y, test_size=0.2,
                                                      random_state=seed)
                ytr, yte = ytr - k_rows.y_offset, yte - k_rows.y_offset
                chunk, fit_params = 500, {}
            n = Xtr.shape[0]
            for k in KS:
                common = dict(epsilon=1.0, delta=DELTA, data_norm=row_norm_bound(pre),
                              horizon=n, release_every=k, random_state=seed)
                est = (PrivateOnlineLogistic(**common) if table == "adult"
                       else PrivateOnlineRegressor(y_bound=k_rows.y_bound, **common))
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted, est = _one_pass(pre, est, Xtr, ytr, chunk, **fit_params)
                seconds = time.perf_counter() - t0
                score = est.score(fitted.transform(Xte), yte)
                b = est.batch_size_ // k  # the round of release_every=1
                dropped = n % b  # main's last incomplete round at the horizon
                results[k].append((score, est.privacy_spent_.releases, est.n_samples_learned_,
                                   n, dropped, _noise_unit(est), seconds,
                                   est.privacy_spent_.epsilon))
            print(f"[{table}] seed {seed} done", flush=True)
        base = np.median([r[5] for r in results[1]])
        for k in KS:
            res = results[k]
            scores = [r[0] for r in res]
            rows.append([
                table, k, f"{np.median(scores):.3f} [{min(scores):.3f}, {max(scores):.3f}]",
                res[0][1], f"{res[0][2]:,} of {res[0][3]:,}", f"{res[0][4]:,}",
                f"{np.median([r[5] for r in res]) / base:.2f}",
                f"{max(r[7] for r in res):.4f}", f"{np.median([r[6] for r in res]):.1f}"])
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    args = parser.parse_args(argv)
    rows = run(args.data, list(range(args.seeds)))
    header = ["table", "release_every", "score (median [range])", "models published",
              "rows learned", "dropped before", "noise std vs k=1", "epsilon spent",
              "seconds"]
    text = "\n".join([
        "# `release_every` and the end of a stream", "",
        "One pass of `partial_fit`, `horizon` = the training rows, epsilon = 1, "
        "delta = 1e-6, the public preprocessing; Adult: `PrivateOnlineLogistic` "
        "(accuracy, chunks of 1,000, the fixed split), white wine quality: "
        "`PrivateOnlineRegressor` (R^2, chunks of 500, 80/20 split per seed). "
        f"Seeds 0-{args.seeds - 1}. *Noise std vs k=1*: the final release's noise std "
        "per unit of sensitivity, relative to `release_every=1` (a public number). "
        "*Dropped before*: rows of the last incomplete round that the horizon's call "
        "left unlearned before issue 31 (now learned as a final round).", "",
        md_table(header, rows), "",
        f"Command: `{command_line('bench_release_every.py')}`", "",
        *machine_lines(), ""])
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
