"""Fingerprints of everything the estimators release, to prove a refactor changes no output.

Runs every estimator x algorithm x mechanism x sampler x budget x path
(``fit``, ``partial_fit`` over uneven chunks, ``horizon`` known or not, a
ledger with a budget, ``release_every`` and ``flush()``), the linear
estimators at their defaults on wide CSR rows (2,048 columns), the private
scaler, the selector and seed 004, each with a fixed ``random_state``, and records a SHA-256 of what the run released
after every call (coefficients, intercepts, ``privacy_spent_``, counts,
predictions) -- or of the error it raised, so refusals are pinned too.

    python benchmarks/check_outputs.py --write before.json    # on the old code
    python benchmarks/check_outputs.py --compare before.json  # on the new code

``--compare`` exits 1 and names every configuration whose output changed.
Fingerprints are bit-level: compare runs on the same machine and BLAS thread
count (float leaves sum with BLAS, whose summation order may follow the
thread count).
"""

import argparse
import hashlib
import itertools
import json
import sys
import tempfile
import warnings
from pathlib import Path

from _common import REPO  # noqa: F401  (puts the checkout first on sys.path)

import numpy as np
import scipy.sparse as sp

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivacyLedger,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
    PrivateSubmodularSelector,
)
from skdpol.distributed import MultiPartyPrivateSGD
from skdpol.preprocessing import PrivateStandardScaler

N, D = 600, 4
CHUNKS = [0, 130, 131, 400, 600]  # uneven: rounds straddle calls, one chunk of one row


WIDE = 2048  # columns of the wide kinds: past 1,000 features, the wide streams' rules


def _data(kind):
    rng = np.random.default_rng(7)
    if kind.startswith("wide"):
        # CSR rows of ~20 hashed-like nonzeros and a column shared by every row
        # (the wide rules, the sparse rounds and the compiled kernels at width)
        X = sp.random(N, WIDE - 1, density=20 / WIDE, format="csr", random_state=7)
        X.data = rng.normal(size=X.data.size) / 4
        X = sp.hstack([sp.csr_matrix(np.full((N, 1), 0.5)), X], format="csr")
        s = X @ rng.normal(size=WIDE)
        if kind == "wide_reg":
            return X, s / np.std(s) + 0.1 * rng.normal(size=N)
        return X, (s + rng.logistic(size=N) > 0).astype(int)
    X = rng.normal(size=(N, D)) / 2
    if kind == "reg":
        return X, X @ [1.0, -2.0, 0.5, 0.0] + 0.1 * rng.normal(size=N)
    if kind == "clf3":
        return X, np.argmax(X[:, :3] + 0.3 * rng.normal(size=(N, 3)), axis=1)
    return X, (X @ [2.0, -1.0, 0.5, 0.0] + rng.logistic(size=N) > 0).astype(int)


def _released(est, X):
    parts = []
    for name in ("coef_", "intercept_", "support_", "mean_", "scale_", "classes_",
                 "n_samples_seen_", "n_samples_waiting_", "n_rounds_"):
        if hasattr(est, name):
            parts.append(np.asarray(getattr(est, name)).tobytes())
    if hasattr(est, "privacy_spent_"):
        parts.append(repr(est.privacy_spent_).encode())
        parts.append(np.float64(est.privacy_spent_.epsilon).tobytes())
    for method in ("predict", "transform", "decision_function"):
        if hasattr(est, method):
            try:
                parts.append(np.asarray(getattr(est, method)(X[:50])).tobytes())
            except Exception as exc:  # noqa: BLE001  (a refusal is an output too)
                parts.append(f"{type(exc).__name__}: {exc}".encode())
    return b"|".join(parts)


def _run(make, kind, path, fit_kw=None):
    X, y = _data(kind)
    digest = hashlib.sha256()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est = make()
            if path == "fit":
                est.fit(X, y, **(fit_kw or {})) if kind != "none" else est.fit(X)
                digest.update(_released(est, X))
            else:
                for a, b in zip(CHUNKS[:-1], CHUNKS[1:]):
                    if kind == "none":
                        est.partial_fit(X[a:b])
                    else:
                        est.partial_fit(X[a:b], y[a:b], **(fit_kw or {}))
                    digest.update(_released(est, X))
                if path == "flush":  # the end of the stream: every waiting row learned
                    est.flush()
                    digest.update(_released(est, X))
                    digest.update(np.int64(est.n_samples_learned_).tobytes())
            if hasattr(est, "public_model"):
                digest.update(_released(est.public_model(), X))
        except Exception as exc:  # noqa: BLE001
            digest.update(f"raised {type(exc).__name__}: {exc}".encode())
    digest.update(repr(sorted({(w.category.__name__, str(w.message)) for w in caught})).encode())
    return digest.hexdigest()


def configurations(ledger_dir):
    """(name, factory, kind, path, fit keywords) for every configuration."""
    out = []
    budgets = [dict(epsilon=1.0, delta=1e-6), dict(epsilon=2.0, delta=0.0),
               dict(epsilon=np.inf, delta=1e-6)]
    for est_name, cls, kind, algorithms in (
            ("regressor", PrivateOnlineRegressor, "reg",
             ["auto", "ftl", "noisy-gd", "ftrl", "ftal", "igd", "giga", "mi-ogd"]),
            ("logistic", PrivateOnlineLogistic, "clf",
             ["auto", "ftrl", "ftal", "igd", "giga", "mi-ogd", "noisy-gd"])):
        for algorithm, mechanism, sampler, budget, horizon, batch, path in itertools.product(
                algorithms, ["auto", "tree", "blt"], ["discrete", "float"], budgets,
                [None, N], ["auto", 1, 64], ["fit", "partial_fit"]):
            if mechanism != "auto" and (sampler == "float" or batch == 1):
                continue  # keep the product affordable: mechanisms on the default sampler
            params = dict(algorithm=algorithm, mechanism=mechanism, noise_sampler=sampler,
                          horizon=horizon, batch_size=batch, data_norm=2.0, random_state=0,
                          **budget)
            if kind == "reg":
                params["y_bound"] = 4.0
            fit_kw = {"classes": [0, 1]} if kind == "clf" and path == "partial_fit" else None
            name = f"{est_name} {path} " + " ".join(f"{k}={v}" for k, v in params.items())
            out.append((name, lambda cls=cls, p=params: cls(**p), kind, path, fit_kw))
    # multiclass, bandit feedback, no intercept, the seeds' paper calibration
    extra = {
        "logistic multiclass": (lambda: PrivateOnlineLogistic(data_norm=2.0, horizon=N,
                                                              random_state=0), "clf3"),
        "logistic bandit": (lambda: PrivateOnlineLogistic(
            data_norm=2.0, algorithm="mi-ogd", feedback="bandit", batch_size=8,
            random_state=0), "clf"),
        "regressor bandit": (lambda: PrivateOnlineRegressor(
            data_norm=2.0, y_bound=4.0, algorithm="mi-ogd", feedback="bandit", batch_size=8,
            alpha=1.0, random_state=0), "reg"),
        "regressor no intercept": (lambda: PrivateOnlineRegressor(
            data_norm=2.0, y_bound=4.0, fit_intercept=False, horizon=N, random_state=0), "reg"),
        "logistic no intercept": (lambda: PrivateOnlineLogistic(
            data_norm=2.0, fit_intercept=False, random_state=0), "clf"),
        "regressor paper": (lambda: PrivateOnlineRegressor(
            data_norm=2.0, y_bound=4.0, noise_calibration="paper", batch_size=1,
            horizon=N, random_state=0), "reg"),
        "logistic paper igd": (lambda: PrivateOnlineLogistic(
            data_norm=2.0, algorithm="igd", noise_calibration="paper", batch_size=1,
            horizon=N, random_state=0), "clf"),
        "regressor bounds from data": (lambda: PrivateOnlineRegressor(random_state=0), "reg"),
        "logistic bounds from data": (lambda: PrivateOnlineLogistic(random_state=0), "clf"),
        "regressor ledger budget": (lambda: PrivateOnlineRegressor(
            data_norm=2.0, y_bound=4.0, horizon=N, random_state=0,
            ledger=PrivacyLedger(Path(tempfile.mkdtemp(dir=ledger_dir)) / "l.sqlite",
                                 budget=(1.5, 1e-5))), "reg"),
        "logistic ledger budget": (lambda: PrivateOnlineLogistic(
            data_norm=2.0, horizon=N, random_state=0,
            ledger=PrivacyLedger(Path(tempfile.mkdtemp(dir=ledger_dir)) / "l.sqlite",
                                 budget=(1.5, 1e-5))), "clf"),
        **{f"kernel {a} {s}": (lambda a=a, s=s: KernelPrivateOnlineRegressor(
            algorithm=a, noise_sampler=s, n_components=16, data_norm=2.0, y_bound=4.0,
            batch_size=8, horizon=N, random_state=0), "reg")
           for a in ("auto", "gd", "ftl", "korls") for s in ("discrete", "float")},
        **{f"selector {f} {m}": (lambda f=f, m=m: PrivateSubmodularSelector(
            n_items=D, feedback=f, mechanism=m, epsilon=1.0, horizon=N, random_state=0),
            "none") for f in ("full", "bandit") for m in ("tree", "blt")},
        **{f"scaler {s}": (lambda s=s: PrivateStandardScaler(
            epsilon=1.0, bounds=(-2.0, 2.0), noise_sampler=s, random_state=0), "none")
           for s in ("discrete", "float")},
    }
    for name, (make, kind) in extra.items():
        for path in ("fit", "partial_fit"):
            fit_kw = ({"classes": np.unique(_data(kind)[1])}
                      if kind.startswith("clf") and path == "partial_fit" else None)
            out.append((f"{name} {path}", make, kind, path, fit_kw))
    # release_every (a model every k calls) and flush() (the end of a stream: before
    # horizon=2N, or refused once horizon=N is reached)
    for (est_name, make, kind, algorithms), k, horizon, path in itertools.product(
            (("regressor", lambda **p: PrivateOnlineRegressor(y_bound=4.0, **p), "reg",
              ("auto", "ftl", "ftrl", "noisy-gd")),
             ("logistic", PrivateOnlineLogistic, "clf",
              ("auto", "ftrl", "ftal", "igd", "noisy-gd")),
             ("kernel", lambda **p: KernelPrivateOnlineRegressor(
                 y_bound=4.0, n_components=16, **p), "reg", ("auto", "ftl", "korls", "gd"))),
            (1, 2), (None, N, 2 * N), ("partial_fit", "flush")):
        fit_kw = {"classes": [0, 1]} if kind == "clf" else None
        for algorithm in algorithms:
            params = dict(algorithm=algorithm, release_every=k, horizon=horizon,
                          data_norm=2.0, random_state=0, epsilon=1.0, delta=1e-6)
            name = f"{est_name} release_every {path} " + " ".join(
                f"{key}={v}" for key, v in params.items())
            out.append((name, lambda m=make, p=params: m(**p), kind, path, fit_kw))
    # wide sparse rows at the defaults: every budget kind, horizon known or not
    for (est_name, make, kind), budget, horizon, path in itertools.product(
            (("regressor wide", lambda **p: PrivateOnlineRegressor(y_bound=4.0, **p), "wide_reg"),
             ("logistic wide", PrivateOnlineLogistic, "wide_clf")),
            budgets, (None, N), ("fit", "partial_fit", "flush")):
        params = dict(horizon=horizon, data_norm=2.0, random_state=0, **budget)
        fit_kw = {"classes": [0, 1]} if kind == "wide_clf" and path != "fit" else None
        name = f"{est_name} {path} " + " ".join(f"{k}={v}" for k, v in params.items())
        out.append((name, lambda m=make, p=params: m(**p), kind, path, fit_kw))
    for protocol, trust, loss, sampler in itertools.product(
            ("sgd1", "sgd2"), ("local", "secure-aggregation"), ("squared_error", "log_loss"),
            ("discrete", "float")):
        kind = "reg" if loss == "squared_error" else "clf"
        out.append((f"seed 004 {protocol} {trust} {loss} {sampler} fit",
                    lambda p=protocol, t=trust, lo=loss, s=sampler, k=kind: MultiPartyPrivateSGD(
                        protocol=p, trust_model=t, loss=lo, noise_sampler=s, n_rounds=5,
                        data_norm=2.0, random_state=0, epsilon=1.0, delta=1e-6,
                        **({"y_bound": 4.0} if k == "reg" else {})),
                    kind, "fit", None))
    return out


def fingerprints(select=None):
    results = {}
    with tempfile.TemporaryDirectory() as ledger_dir:
        for name, make, kind, path, fit_kw in configurations(ledger_dir):
            if select and select not in name:
                continue
            if name.startswith("seed 004 sgd1"):  # n^2 single-row steps: 60 rows
                global N
                saved, N = N, 60
                try:
                    results[name] = _run(make, kind, path, fit_kw)
                finally:
                    N = saved
            else:
                results[name] = _run(make, kind, path, fit_kw)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="FILE", help="write the fingerprints to FILE")
    group.add_argument("--compare", metavar="FILE", help="compare with the fingerprints in FILE")
    parser.add_argument("--select", help="only configurations whose name contains this")
    args = parser.parse_args(argv)
    results = fingerprints(args.select)
    if args.write:
        Path(args.write).write_text(json.dumps(results, indent=0, sort_keys=True))
        print(f"{len(results)} configurations written to {args.write}")
        return 0
    before = json.loads(Path(args.compare).read_text())
    changed = [k for k in results if k in before and before[k] != results[k]]
    missing = [k for k in before if k not in results and not args.select]
    for k in changed:
        print(f"changed: {k}")
    for k in missing:
        print(f"not run: {k}")
    print(f"{len(results)} configurations compared: {len(changed)} changed, "
          f"{len(missing)} not run")
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
