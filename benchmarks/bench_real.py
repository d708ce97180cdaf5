"""skdpol on real data (UCI Adult, UCI Wine Quality white) against private and non-private peers.

Data: the project's shared folder (``skdpol.datasets.data_home()``; nothing is
downloaded). Preprocessing spends no privacy: ``adult_preprocessor()`` /
``wine_quality_preprocessor()`` are built from the public schema (category
lists, plausible ranges) and ``data_norm = row_norm_bound(preprocessor)`` comes
from their structure (sqrt(19) for Adult, with its public bins, sqrt(11) for wine), never from the
rows. Wine labels are centred on the public 0-10 scale (y - 5, y_bound = 5).

* Adult: the file's own split (32,561 train, 16,281 test); test accuracy.
  ``PrivateOnlineLogistic`` in a Pipeline with the preprocessing, ``fit`` and
  ``partial_fit`` over one pass in chunks of 1,000 rows (the public label set
  passed as ``classes``); diffprivlib ``LogisticRegression`` with the same
  ``data_norm``; non-private scikit-learn ``LogisticRegression`` and one pass
  of ``SGDClassifier.partial_fit`` in the same chunks.
* Wine: a random 80/20 split per seed (3,918 / 980 rows); test R^2.
  ``PrivateOnlineRegressor`` and ``KernelPrivateOnlineRegressor``, ``fit`` and
  ``partial_fit`` in chunks of 500 rows; ``PrivateSubmodularSelector`` ->
  ``Ridge`` (below); diffprivlib ``LinearRegression`` with the public bounds
  ``bounds_X = (0, 1)`` per column and ``bounds_y = (0, 10)``; non-private
  ``Ridge`` and one pass of ``SGDRegressor.partial_fit``.
* Selector -> Ridge: the selector sees a supervised relevance stream built
  without any statistic: rows are paired in the (seeded, data-independent)
  order of the split, and pair k gives the round
  r = clip(GAIN * [s, -s], -1, 1), s_j = (z_aj - z_bj) (y_a - y_b) / 10,
  whose mean is cov(z_j, y) / 5 with no centring needed; item j (j + 11)
  stands for "column j helps with a positive (negative) sign", and the
  support is their union. One person is in one pair, so one round: the
  selector's replace-one guarantee is the person's. Only the selection is
  private; the Ridge after it is a non-private measure of what was selected.
  Columns: test R^2, the number of columns kept, and the Jaccard overlap
  with the selection at epsilon = inf.

Every skdpol model and diffprivlib at delta = 1e-5, epsilon in {0.5, 1, 2}
(plus inf for skdpol, the no-noise limit of the same configuration), 5 seeds
(the noise seed; for wine also the split). Cells: median [IQR] over seeds.
Every estimator's keyword arguments are in the table ``KWARGS`` below.

diffprivlib 0.6.6 breaks under scikit-learn >= 1.8, so it runs in its own
virtual environment, benchmarks/.venv-diffprivlib (made once and cached by
``bench_utility.ensure_diffprivlib_env``: ``python -m venv`` then
``pip install scikit-learn==1.6.1 diffprivlib==0.6.6 numpy``), through ONE
worker subprocess reading the preprocessed arrays from .npy files. Without it
the diffprivlib rows say n/a and the rest is still produced.

Writes docs/benchmarks/real_data.md (not with --quick, unless --out).

    python benchmarks/bench_real.py                      # full run
    python benchmarks/bench_real.py --quick --out /tmp/real.md   # 1 seed, epsilon = 1
    python benchmarks/bench_real.py --no-diffprivlib
"""

import json
import subprocess
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

from _common import command_line, machine_lines, md_table, median_iqr, report_parser, write_report
from bench_utility import VENV, ensure_diffprivlib_env  # no side effects on import

import numpy as np  # noqa: E402
from sklearn.base import BaseEstimator, clone  # noqa: E402
from sklearn.feature_selection import SelectorMixin  # noqa: E402
from sklearn.linear_model import (  # noqa: E402
    LogisticRegression,
    Ridge,
    SGDClassifier,
    SGDRegressor,
)
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402

from skdpol import (  # noqa: E402
    KernelPrivateOnlineRegressor,
    PrivacyLeakWarning,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
    PrivateSubmodularSelector,
)
from skdpol.datasets import (  # noqa: E402
    adult_preprocessor,
    data_home,
    load_adult,
    load_wine_quality,
    row_norm_bound,
    wine_quality_preprocessor,
)
from skdpol.submodular import ConcaveMassCost  # noqa: E402

DELTA = 1e-5
EPSILONS = (0.5, 1.0, 2.0)
ADULT_CHUNK, WINE_CHUNK = 1_000, 500
WINE_TEST = 0.2
ROWS = "rows"  # stands for the number of training rows (the public stream length)
SANITY_EPS = 1e6  # diffprivlib's "eps = inf" cell: shows its call is right (it has no inf)

# ---------------------------------------------------------------------------
# Every estimator's keyword arguments, in one place. The script adds only what
# the experiment fixes: epsilon, delta and random_state (= seed) for the private
# models, data_norm = row_norm_bound(preprocessor) where the estimator takes it,
# y_bound = 5 for the wine regressors (labels centred on the 0-10 scale), and
# ROWS is replaced by the number of training rows. Today's API and defaults
# except where a value is written here.
KWARGS = {
    # skdpol, Adult
    "PrivateOnlineLogistic.fit": dict(),
    "PrivateOnlineLogistic.partial_fit": dict(horizon=ROWS),
    "PrivateOnlineLogistic.partial_fit, tree": dict(horizon=ROWS, mechanism="tree"),
    "PrivateOnlineLogistic.partial_fit, horizon=None": {},
    # skdpol, wine
    "PrivateOnlineRegressor.fit": dict(),
    "PrivateOnlineRegressor.partial_fit": dict(horizon=ROWS),
    "KernelPrivateOnlineRegressor.fit": dict(),
    "KernelPrivateOnlineRegressor.partial_fit": dict(horizon=ROWS),
    # the selector runs one round per pair of rows: horizon = pairs (set by the script);
    # alpha, GAIN and scale were set on this data at epsilon = inf (4 of 11 columns kept)
    "PrivateSubmodularSelector": dict(alpha=0.003),
    "selector.relevance": dict(gain=20.0, scale=0.2),
    "selector.Ridge": dict(alpha=1e-3),
    # non-private scikit-learn
    "LogisticRegression": dict(max_iter=1000),
    "SGDClassifier": dict(loss="log_loss"),
    "Ridge": dict(alpha=1e-3),
    "SGDRegressor": dict(),
    # diffprivlib (in its own environment); data_norm / bounds added by the script
    "diffprivlib.LogisticRegression": dict(),
    "diffprivlib.LinearRegression": dict(),
}


def kwargs(name, rows=None, **fixed):
    """``KWARGS[name]`` with ROWS resolved, plus the experiment's fixed arguments."""
    out = {k: (rows if v == ROWS else v) for k, v in KWARGS[name].items()}
    return {**fixed, **out}


def eps_name(eps):
    return "inf" if np.isinf(eps) else f"{eps:g}"


# ----------------------------------------------------------------- the selector
class PairedRelevanceSelector(SelectorMixin, BaseEstimator):
    """PrivateSubmodularSelector on a supervised relevance stream (see the module doc).

    Pair k of rows (2k, 2k + 1) is one round with row
    clip(gain [s, -s], -1, 1), s_j = (z_2k,j - z_2k+1,j)(y_2k - y_2k+1) / y_range;
    the support keeps column j when item j or item j + d is selected.
    """

    def __init__(self, *, epsilon=1.0, delta=1e-5, gain=20.0, scale=0.2, y_range=10.0,
                 selector_kwargs=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.gain = gain
        self.scale = scale
        self.y_range = y_range
        self.selector_kwargs = selector_kwargs
        self.random_state = random_state

    def fit(self, X, y):
        X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
        n = X.shape[0] // 2 * 2
        s = (X[0:n:2] - X[1:n:2]) * ((y[0:n:2] - y[1:n:2]) / self.y_range)[:, None]
        rounds = np.clip(self.gain * np.hstack([s, -s]), -1.0, 1.0)
        self.selector_ = PrivateSubmodularSelector(
            cost=ConcaveMassCost(scale=self.scale), epsilon=self.epsilon, delta=self.delta,
            horizon=rounds.shape[0], random_state=self.random_state,
            **(self.selector_kwargs or {})).fit(rounds)
        d = X.shape[1]
        self.support_ = self.selector_.support_[:d] | self.selector_.support_[d:]
        self.n_features_in_ = d
        return self

    def _get_support_mask(self):
        return self.support_


# ------------------------------------------------------------------- helpers
def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def stream(pre, est, X, y, chunk, **fit_params):
    """One pass of ``partial_fit`` in chunks behind the public preprocessing.

    The preprocessor reads no statistic, so fitting it on the first chunk
    changes nothing; the returned Pipeline predicts with the final model.
    """
    pre = clone(pre).fit(X.iloc[:chunk])
    for start in range(0, X.shape[0], chunk):
        est.partial_fit(pre.transform(X.iloc[start:start + chunk]), y[start:start + chunk],
                        **fit_params)
    return make_pipeline(pre, est)


def record(results, dataset, method, eps, seed, score, seconds, **extra):
    results.append(dict(dataset=dataset, method=method, epsilon=float(eps), seed=int(seed),
                        score=float(score), seconds=float(seconds), **extra))


# ------------------------------------------------------------------- Adult
def run_adult(adult, seeds, epsilons, results):
    pre = adult_preprocessor()
    dn = row_norm_bound(pre)
    Xtr, ytr, Xte, yte = adult.X_train, adult.y_train, adult.X_test, adult.y_test
    n = Xtr.shape[0]
    for seed in seeds:
        for eps in (*epsilons, np.inf):
            common = dict(epsilon=eps, delta=DELTA, data_norm=dn, random_state=seed)
            est = PrivateOnlineLogistic(**kwargs("PrivateOnlineLogistic.fit", n, **common))
            model, sec = timed(lambda: Pipeline([("pre", clone(pre)), ("est", est)]).fit(
                Xtr, ytr, est__classes=adult.classes))
            record(results, "adult", "PrivateOnlineLogistic.fit", eps, seed,
                   model.score(Xte, yte), sec)
            est = PrivateOnlineLogistic(**kwargs("PrivateOnlineLogistic.partial_fit", n,
                                                 **common))
            model, sec = timed(lambda: stream(pre, est, Xtr, ytr, ADULT_CHUNK,
                                              classes=adult.classes))
            record(results, "adult", "PrivateOnlineLogistic.partial_fit", eps, seed,
                   model.score(Xte, yte), sec)
            est = PrivateOnlineLogistic(**kwargs("PrivateOnlineLogistic.partial_fit, tree", n,
                                                 **common))
            model, sec = timed(lambda: stream(pre, est, Xtr, ytr, ADULT_CHUNK,
                                              classes=adult.classes))
            record(results, "adult", "PrivateOnlineLogistic.partial_fit, tree", eps, seed,
                   model.score(Xte, yte), sec)
            est = PrivateOnlineLogistic(**kwargs("PrivateOnlineLogistic.partial_fit, horizon=None",
                                                 n, **common))
            model, sec = timed(lambda: stream(pre, est, Xtr, ytr, ADULT_CHUNK,
                                              classes=adult.classes))
            record(results, "adult", "PrivateOnlineLogistic.partial_fit, horizon=None", eps,
                   seed, model.score(Xte, yte), sec)
        sgd = SGDClassifier(**kwargs("SGDClassifier", n, random_state=seed))
        model, sec = timed(lambda: stream(pre, sgd, Xtr, ytr, ADULT_CHUNK,
                                          classes=adult.classes))
        record(results, "adult", "SGDClassifier.partial_fit", np.inf, seed,
               model.score(Xte, yte), sec)
        print(f"[adult] seed {seed} done", flush=True)
    lr = make_pipeline(clone(pre), LogisticRegression(**kwargs("LogisticRegression", n)))
    model, sec = timed(lambda: lr.fit(Xtr, ytr))
    record(results, "adult", "LogisticRegression", np.inf, 0, model.score(Xte, yte), sec)
    record(results, "adult", "majority class (train)", np.inf, 0,
           np.mean(yte == np.bincount(ytr).argmax()), 0.0)
    fitted = clone(pre).fit(Xtr.iloc[:1])
    return {"adult": dict(X_train=fitted.transform(Xtr), y_train=ytr, X_test=fitted.transform(Xte),
                          y_test=yte, seeds=list(seeds), data_norm=dn)}


# -------------------------------------------------------------------- wine
def run_wine(wine, seeds, epsilons, results):
    pre = wine_quality_preprocessor()
    dn, yb, off = row_norm_bound(pre), wine.y_bound, wine.y_offset
    arrays = {}
    for seed in seeds:
        Xtr, Xte, ytr, yte = train_test_split(wine.X, wine.y, test_size=WINE_TEST,
                                              random_state=seed)
        ctr, cte = ytr - off, yte - off  # R^2 is the same on the centred labels
        n = Xtr.shape[0]
        reference_support = None
        for eps in (np.inf, *epsilons):
            common = dict(epsilon=eps, delta=DELTA, random_state=seed)
            for name, cls, extra in [
                ("PrivateOnlineRegressor", PrivateOnlineRegressor, dict(data_norm=dn)),
                ("KernelPrivateOnlineRegressor", KernelPrivateOnlineRegressor, dict(data_norm=dn)),
            ]:
                est = cls(**kwargs(f"{name}.fit", n, **common, y_bound=yb, **extra))
                model, sec = timed(lambda: make_pipeline(clone(pre), est).fit(Xtr, ctr))
                record(results, "wine", f"{name}.fit", eps, seed, model.score(Xte, cte), sec)
                est = cls(**kwargs(f"{name}.partial_fit", n, **common, y_bound=yb, **extra))
                model, sec = timed(lambda: stream(pre, est, Xtr, ctr, WINE_CHUNK))
                record(results, "wine", f"{name}.partial_fit", eps, seed,
                       model.score(Xte, cte), sec)
            sel = PairedRelevanceSelector(
                **common, **KWARGS["selector.relevance"],
                selector_kwargs=KWARGS["PrivateSubmodularSelector"])
            model, sec = timed(lambda: make_pipeline(
                clone(pre), sel, Ridge(**KWARGS["selector.Ridge"])).fit(Xtr, ctr))
            support = sel.support_
            if reference_support is None:
                reference_support = support
            union = np.sum(support | reference_support)
            jaccard = np.sum(support & reference_support) / union if union else 1.0
            record(results, "wine", "PrivateSubmodularSelector -> Ridge", eps, seed,
                   model.score(Xte, cte), sec, n_selected=int(support.sum()),
                   jaccard=float(jaccard))
        model, sec = timed(lambda: make_pipeline(clone(pre), Ridge(**kwargs("Ridge", n)))
                           .fit(Xtr, ctr))
        record(results, "wine", "Ridge", np.inf, seed, model.score(Xte, cte), sec)
        sgd = SGDRegressor(**kwargs("SGDRegressor", n, random_state=seed))
        model, sec = timed(lambda: stream(pre, sgd, Xtr, ctr, WINE_CHUNK))
        record(results, "wine", "SGDRegressor.partial_fit", np.inf, seed,
               model.score(Xte, cte), sec)
        fitted = clone(pre).fit(Xtr.iloc[:1])
        arrays[f"wine_{seed}"] = dict(X_train=fitted.transform(Xtr), y_train=ytr,
                                      X_test=fitted.transform(Xte), y_test=yte, seeds=[seed])
        print(f"[wine] seed {seed} done", flush=True)
    return arrays


# --------------------------------------------------------------- diffprivlib
WORKER = textwrap.dedent('''\
    """diffprivlib fits on preprocessed arrays (.npy); runs in its own environment."""
    import json
    import sys
    import time
    import warnings

    import numpy as np
    import sklearn
    import diffprivlib
    from diffprivlib.models import LinearRegression, LogisticRegression
    from threadpoolctl import threadpool_limits

    manifest_path, out_path = sys.argv[1], sys.argv[2]
    with open(manifest_path) as f:
        tasks = json.load(f)
    results = []
    for task in tasks:
        arr = {k: np.load(f"{task['folder']}/{k}.npy")
               for k in ("X_train", "y_train", "X_test", "y_test")}
        for seed in task["seeds"]:
            for eps in task["epsilons"]:
                if task["model"] == "LogisticRegression":
                    model = LogisticRegression(epsilon=eps, data_norm=task["data_norm"],
                                               random_state=seed, **task["kwargs"])
                else:
                    d = arr["X_train"].shape[1]
                    model = LinearRegression(
                        epsilon=eps, bounds_X=(np.zeros(d), np.ones(d)),
                        bounds_y=tuple(task["bounds_y"]), random_state=seed, **task["kwargs"])
                with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    t0 = time.perf_counter()
                    model.fit(arr["X_train"], arr["y_train"])
                    seconds = time.perf_counter() - t0
                score = float(model.score(arr["X_test"], arr["y_test"]))
                results.append({"dataset": task["dataset"], "method": task["method"],
                                "seed": seed, "epsilon": eps, "score": score,
                                "seconds": seconds,
                                "warnings": sorted({type(w.message).__name__ + ": "
                                                    + str(w.message)[:60] + "..."
                                                    for w in caught})})
                print(f"{task['method']} seed={seed} eps={eps:g} score={score:.4f} "
                      f"({seconds:.1f} s)", flush=True)
    with open(out_path, "w") as f:
        json.dump({"versions": {"diffprivlib": diffprivlib.__version__,
                                "scikit-learn": sklearn.__version__,
                                "numpy": np.__version__,
                                "python": sys.version.split()[0]},
                   "results": results}, f)
''')


def run_diffprivlib(py, arrays, epsilons, tmpdir):
    """Every diffprivlib fit in one subprocess of the diffprivlib environment."""
    tasks = []
    for key, arr in arrays.items():
        folder = tmpdir / key
        folder.mkdir()
        for name in ("X_train", "y_train", "X_test", "y_test"):
            np.save(folder / f"{name}.npy", arr[name])
        if key == "adult":
            tasks.append(dict(dataset="adult", method="diffprivlib LogisticRegression",
                              model="LogisticRegression", folder=str(folder),
                              seeds=arr["seeds"], epsilons=[*epsilons, SANITY_EPS],
                              data_norm=arr["data_norm"],
                              kwargs=KWARGS["diffprivlib.LogisticRegression"]))
        else:
            tasks.append(dict(dataset="wine", method="diffprivlib LinearRegression",
                              model="LinearRegression", folder=str(folder),
                              seeds=arr["seeds"], epsilons=[*epsilons, SANITY_EPS],
                              bounds_y=[0.0, 10.0],  # the public quality scale
                              kwargs=KWARGS["diffprivlib.LinearRegression"]))
    worker, manifest, out = tmpdir / "worker.py", tmpdir / "manifest.json", tmpdir / "out.json"
    worker.write_text(WORKER)
    manifest.write_text(json.dumps(tasks))
    r = subprocess.run([str(py), str(worker), str(manifest), str(out)], capture_output=True,
                       text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"diffprivlib worker failed:\n{r.stderr[-2000:]}")
    data = json.loads(out.read_text())
    for r in data["results"]:  # the sanity fits go to the eps = inf column
        r["epsilon"] = np.inf if r["epsilon"] == SANITY_EPS else r["epsilon"]
    return data["results"], data["versions"]


# ------------------------------------------------------------------ report
def cells(results, dataset, method, eps, key="score", digits=3):
    vals = [r[key] for r in results if r["dataset"] == dataset and r["method"] == method
            and (r["epsilon"] == eps or (np.isinf(eps) and np.isinf(r["epsilon"])))]
    return median_iqr(vals, digits) if vals else "-"


def seconds(results, dataset, method):
    vals = [r["seconds"] for r in results if r["dataset"] == dataset and r["method"] == method]
    return f"{np.median(vals):.2f}" if vals else "-"


def table(results, dataset, methods, epsilons, extra=()):
    header = ["method", *(f"eps = {eps_name(e)}" for e in epsilons), "eps = inf / non-private",
              "median s per fit"]
    rows = []
    for method in methods:
        rows.append([method, *(cells(results, dataset, method, e) for e in epsilons),
                     cells(results, dataset, method, np.inf), seconds(results, dataset, method)])
        for key, label, digits in extra:
            if any(key in r for r in results if r["method"] == method):
                rows.append([f"{method}: {label}",
                             *(cells(results, dataset, method, e, key, digits)
                               for e in (*epsilons, np.inf)), ""])
    return md_table(header, rows)


def report(results, epsilons, seeds, dpl_info, elapsed, quick, note=None):
    adult_methods = ["PrivateOnlineLogistic.fit", "PrivateOnlineLogistic.partial_fit",
                     "PrivateOnlineLogistic.partial_fit, tree",
                     "PrivateOnlineLogistic.partial_fit, horizon=None",
                     "diffprivlib LogisticRegression", "LogisticRegression",
                     "SGDClassifier.partial_fit", "majority class (train)"]
    wine_methods = ["PrivateOnlineRegressor.fit", "PrivateOnlineRegressor.partial_fit",
                    "KernelPrivateOnlineRegressor.fit",
                    "KernelPrivateOnlineRegressor.partial_fit",
                    "PrivateSubmodularSelector -> Ridge", "diffprivlib LinearRegression",
                    "Ridge", "SGDRegressor.partial_fit"]
    kw = "\n".join(f"| `{k}` | `{v}` |" for k, v in KWARGS.items())
    cmd = command_line("bench_real.py")
    cmd = cmd.replace(note, '"..."') if note else cmd
    lines = [
        "# Real data: UCI Adult and Wine Quality (white)",
        "",
        *([note, ""] if note else []),
        f"Produced by `{cmd}` "
        f"({'quick: ' if quick else ''}{len(seeds)} seed(s), epsilon in "
        f"{{{', '.join(eps_name(e) for e in epsilons)}}}, delta = {DELTA:g}; "
        f"{elapsed / 60:.1f} min).",
        "",
        *machine_lines(),
        f"- diffprivlib: {dpl_info}",
        "",
        "Preprocessing spends no privacy: `skdpol.datasets.adult_preprocessor()` and "
        "`wine_quality_preprocessor()` use only the public schema (documented category "
        "lists, plausible ranges), and `data_norm = row_norm_bound(preprocessor)` "
        "(sqrt(19) = 4.359 for Adult, whose preprocessor adds one-hot bins at public edges, sqrt(11) = 3.317 for wine) comes from their "
        "structure. Wine labels are centred on the public 0-10 scale (y - 5, "
        "`y_bound = 5`); diffprivlib gets the same public knowledge (`data_norm`; "
        "`bounds_X = (0, 1)`, `bounds_y = (0, 10)`). Cells: median [IQR] over seeds "
        "(the noise seed; for wine also the 80/20 split); one value when there is one "
        "run. The eps = inf column is the same configuration without noise (skdpol), "
        f"diffprivlib at eps = {SANITY_EPS:g} (a check that it is called right), or "
        "the non-private peer. The method of each row and the selector's relevance "
        "stream are described in `benchmarks/bench_real.py`.",
        "",
        "## Adult: test accuracy (file's split, 32,561 / 16,281 rows)",
        "",
        table(results, "adult", adult_methods, epsilons),
        "",
        "## Wine quality (white): test R^2 (80/20 split per seed)",
        "",
        table(results, "wine", wine_methods, epsilons,
              extra=[("n_selected", "columns kept (of 11)", 1),
                     ("jaccard", "overlap with the eps = inf selection", 2)]),
        "",
        "diffprivlib's LinearRegression perturbs X^T X and X^T y with noise scaled to "
        "the public bounds (0 to 1 per column, 0 to 10 for the label); the wine columns "
        "fill a small part of their plausible ranges, so its noise swamps their spread "
        "(compare its eps = 1e6 cell).",
        "",
        "Only the selection is private in `PrivateSubmodularSelector -> Ridge`; the "
        "Ridge after it is a non-private measure of what was selected (Ridge on all 11 "
        "columns is the `Ridge` row). Its GAIN, scale and alpha were set on this data "
        "at eps = inf.",
        "",
        "## Keyword arguments (`KWARGS` in the script)",
        "",
        "Added by the script: `epsilon`, `delta`, `random_state` (= seed), `data_norm` "
        "from `row_norm_bound`, `y_bound = 5` for the wine regressors, `horizon` = "
        "training rows where the table says `rows`.",
        "",
        "| estimator | kwargs |",
        "|---|---|",
        kw,
        "",
    ]
    return "\n".join(lines)


def main():
    parser = report_parser(__doc__)
    parser.add_argument("--no-diffprivlib", action="store_true",
                        help="skip diffprivlib (no virtual environment, no subprocess)")
    parser.add_argument("--data", help="the data folder (default: skdpol.datasets.data_home())")
    parser.add_argument("--note", help="a paragraph to put under the report's title")
    args = parser.parse_args()
    if data_home(args.data) is None:
        raise SystemExit("the shared data folder is absent: pass --data or set $SKDPOL_DATA.")
    seeds = range(1) if args.quick else range(5)
    epsilons = (1.0,) if args.quick else EPSILONS
    t0 = time.perf_counter()
    results = []
    with warnings.catch_warnings():
        # every bound and label set here is public: a PrivacyLeakWarning is a bug
        warnings.simplefilter("error", PrivacyLeakWarning)
        arrays = run_adult(load_adult(args.data), seeds, epsilons, results)
        arrays.update(run_wine(load_wine_quality(args.data), seeds, epsilons, results))
    dpl_info = "skipped (--no-diffprivlib)"
    if not args.no_diffprivlib:
        py, versions = ensure_diffprivlib_env()
        if py is None:
            dpl_info = f"n/a: {versions}"
            print(f"*** diffprivlib is not available: {versions}", flush=True)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                (dpl, versions), sec = timed(lambda: run_diffprivlib(py, arrays, epsilons,
                                                                     Path(tmp)))
            results += dpl
            warns = sorted({w for r in dpl for w in r["warnings"]})
            dpl_info = (f"diffprivlib {versions['diffprivlib']} with scikit-learn "
                        f"{versions['scikit-learn']}, numpy {versions['numpy']}, in "
                        f"{VENV.name} ({len(dpl)} fits in one subprocess, {sec:.0f} s)"
                        + (f"; its warnings: {'; '.join(warns)}" if warns else ""))
    elapsed = time.perf_counter() - t0
    write_report(report(results, epsilons, list(seeds), dpl_info, elapsed, args.quick,
                        args.note), args, "real_data.md")


if __name__ == "__main__":
    main()
