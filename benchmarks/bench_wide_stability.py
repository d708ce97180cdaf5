"""Step control of the wide classifier stream on rows with a shared column.

The wide classifier's heavy ball (``ftrl-momentum``, beta 0.95, lr = b /
(25 R~^2) on the round's mean gradient, rounds of 2,000-5,000 rows at 2^17
columns) is stable only where no direction carries more than ~20 % of the
rows' squared norm (lr lambda <= b / 100 against heavy ball's bound 2 (1 +
beta) = 3.9). Rows with one column shared by most rows (a token of value
0.8 in every row: 64 % of its squared norm) oscillate. This script compares
rules that steer the step from post-processing of the released prefix sums
only (``--rules``):

- ``off``: main's step before this study (the stream's cap removed).
- ``lib``: the library's rule (``skdpol/online/_curvature.py``, compiled:
  ``secant`` with ``--gate 4 --kappa 2 --decay 0.9 --exempt`` on secant rounds
  2-5 and every 8th, the rates kept between them, a coordinate capped only
  where its estimated lr h passes heavy ball's 2 (1 + beta)).
- ``cap``: lr R~^2 <= 12 (one global cap).
- ``restart``: adaptive restart of the momentum (O'Donoghue and Candes): the
  velocity is zeroed when the released mean gradient's inner product with it
  turns negative.
- ``secant``: (the rule's first version, numpy) per-coordinate curvature
  from the released gradients' changes along the iterates' changes (a
  diagonal secant, least squares over every round with decay ``--decay``):
  h_j = max(0, sum dg_j dtheta_j) / sum dtheta_j^2, and the coordinate's
  step lr_j = min(lr, kappa / h_j) (kappa = ``--kappa``, inside heavy ball's
  3.9); ``--gate G`` counts a term only
  where |dg_j| passes G times a public bound on its noise std;
  ``--exempt`` leaves the intercept at lr (``--kint K``: its own kappa).

Data (``--data``, comma-separated): ``plain`` (``bench_wide.make_rows``, 2^17
hashed-like columns), ``tok5`` / ``tok8`` (the same kind of rows with a
shared token of value 0.5 / 0.8 in the last column, the lead's
reproduction), ``adult`` (Adult through FeatureHasher to 2^17 columns,
``bench_wide_rounds.adult``). Each line: data, epsilon, seed, rule, test
accuracy; ``sgd`` is one pass of SGDClassifier on the same chunks. The
figures of ``docs/benchmarks/wide_stability.md`` (written from this output).
``--time K``: CPU seconds of K alternating passes of ``off``, ``lib`` and SGD.
The prototypes (``cap``, ``restart``, ``secant``) run the stream's numpy
post-processing; ``off`` and ``lib`` its compiled one (the same bits).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_wide_stability.py --data plain,tok8 \\
        --eps inf,1 --seeds 0,1,2 --rules off,lib,cap,restart --sgd
    OMP_NUM_THREADS=1 python benchmarks/bench_wide_stability.py --data plain,tok8 \\
        --eps inf,1 --seeds 0,1,2 --rules secant --gate 4 --kappa 2 --exempt
    OMP_NUM_THREADS=1 python benchmarks/bench_wide_stability.py --data plain --eps inf,1 --time 7
"""

import argparse
import warnings

from _common import REPO  # noqa: F401  (puts the checkout first on sys.path)

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier

import skdpol.online._momentum as mom
from skdpol import PrivateOnlineLogistic

RULE = {"name": "lib", "kappa": 2.0, "decay": 0.9, "cap": 12.0, "gate": 0.0, "exempt": False,
        "kint": np.inf}
_ORIGINAL_ROUND = mom.MomentumFTRL._round


def _wide_classifier(stream):
    return (stream._step_divisor == 25.0 and not hasattr(stream.loss, "threshold")
            and stream.n_features > 1000)


def _round(self, X, y):
    """MomentumFTRL._round with the prototype's rule on wide classifier streams
    (numpy post-processing; the data access is unchanged)."""
    name = RULE["name"]
    if name == "off":  # main's step (before the library's cap): no cap state
        self._curvature = None
    if name in ("off", "lib") or not _wide_classifier(self):
        return _ORIGINAL_ROUND(self, X, y)
    theta = self._theta
    S = mom._margins(X, mom._column_scaled(theta, self.constant, self._scale))
    D = self.loss.derivative(S, y)
    leaf = mom._column_scaled(mom._gradient_sum(X, D), self.constant, self._scale, in_place=True)
    tree = self._tree
    tree.add(leaf.ravel(), 1)
    # ---- post-processing of the released prefix sums
    released = getattr(tree, "shared_release", tree.release)().reshape(theta.shape).copy()
    g = (released - self._last_release) / self.batch_size
    self._last_release = released
    if self.alpha:
        g += self.alpha * theta
    lr = self.learning_rate
    if name == "cap":
        lr = min(lr, RULE["cap"] / self.row_bound**2)
    velocity = self.momentum * self._velocity
    if name == "restart":
        if float(np.vdot(g, self._velocity)) < 0.0:
            velocity = np.zeros_like(velocity)
    velocity = velocity + g
    if name == "secant":
        prev = getattr(self, "_proto_prev", None)
        if prev is not None:
            pg, ptheta = prev
            dg, dth = g - pg, theta - ptheta
            decay = RULE["decay"]
            term = dg * dth
            if RULE["gate"] > 0:
                # only terms whose gradient change passes gate x the public
                # bound on its noise std (the released prefix sums' stds at
                # t, t - 1, t - 2: the second difference's std is at most
                # their weighted sum)
                t = self.n_rounds + 1
                s = tree.noise_std_at([t, t - 1, max(t - 2, 0)])
                bound = (s[0] + 2.0 * s[1] + s[2]) / self.batch_size
                if bound > 0:
                    term = np.where(np.abs(dg) > RULE["gate"] * bound, term, 0.0)
            self._proto_num = decay * self._proto_num + term
            self._proto_den = decay * self._proto_den + dth * dth
        else:
            self._proto_num = np.zeros_like(theta)
            self._proto_den = np.zeros_like(theta)
        self._proto_prev = (g, theta)
        num, den = self._proto_num, self._proto_den
        h = np.divide(np.maximum(num, 0.0), den, out=np.zeros_like(num), where=den > 0)
        lr = np.minimum(lr, RULE["kappa"] / np.maximum(h, 1e-300))
        if RULE["exempt"] and self.intercept:
            lr[:, -1] = np.minimum(self.learning_rate,
                                   RULE["kint"] / np.maximum(h[:, -1], 1e-300))
    self._velocity = velocity
    theta = theta - lr * velocity
    self._theta = theta
    rho = min(1.0, 1.0 / (self.tail * (self.n_rounds + 1)))
    self._average = (1.0 - rho) * self._average + rho * theta


mom.MomentumFTRL._round = _round


def shared_rows(n, d, seed, shared, nnz=30):
    """The lead's reproduction: hashed-like rows, a token of value ``shared``
    in the last column of every row (shared^2 of its squared norm)."""
    rng = np.random.default_rng(seed)
    idx = np.sort((d * rng.random(size=(n, nnz)) ** 4).astype(np.int64), axis=1)
    vals = rng.normal(size=n * nnz)
    X = sp.csr_matrix((vals, idx.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    X = sp.csr_matrix(X * np.sqrt(1 - shared**2))
    tok = sp.csr_matrix((np.full(n, shared), (np.arange(n), np.full(n, d - 1))), shape=(n, d))
    X = sp.csr_matrix(X + tok)
    w = rng.normal(size=d)
    w[d - 1] = 3.0
    y = (X @ w + 0.3 * rng.standard_normal(n) > np.median(X @ w)).astype(int)
    return X, y


def dataset(name, seed, d=2**17):
    if name == "plain":
        from bench_wide_rounds import generated
        return generated(d, 100_000, seed)
    if name == "adult":
        from bench_wide_rounds import adult
        return adult(d, seed)
    shared = {"tok5": 0.5, "tok8": 0.8}[name]
    X, y = shared_rows(110_000, d, seed, shared)
    return X[:100_000], y[:100_000], X[100_000:], y[100_000:], 1.0


def run(X, y, Xte, yte, norm, eps, seed, chunk):
    n = X.shape[0]
    est = PrivateOnlineLogistic(epsilon=eps, data_norm=norm, horizon=n, random_state=seed)
    for i, lo in enumerate(range(0, n, chunk)):
        est.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk],
                        **({"classes": [0, 1]} if i == 0 else {}))
    return est.score(Xte, yte), est.batch_size_


def sgd(X, y, Xte, yte, seed, chunk):
    s = SGDClassifier(random_state=seed)
    for lo in range(0, X.shape[0], chunk):
        s.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk], classes=[0, 1])
    return s.score(Xte, yte)


def timing(args):
    """Fastest and median CPU seconds of ``--time`` passes of each rule (the
    compiled rounds) and of SGD, alternating, on the first data set and seed."""
    import time
    name, seed = args.data.split(",")[0], int(args.seeds.split(",")[0])
    X, y, Xte, yte, norm = dataset(name, seed)
    times = {}
    for _ in range(args.time):
        for eps in (float(e) for e in args.eps.split(",")):
            for rule in ("off", "lib"):
                RULE["name"] = rule
                start = time.process_time()
                run(X, y, Xte, yte, norm, eps, seed, args.chunk)  # (the score's time too)
                times.setdefault(f"{rule} eps={eps:g}", []).append(time.process_time() - start)
        start = time.process_time()
        sgd(X, y, Xte, yte, seed, args.chunk)
        times.setdefault("sgd", []).append(time.process_time() - start)
    for key, values in times.items():
        print(f"{name} {key} cpu fastest {min(values):.3f} median {np.median(values):.3f}",
              flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="plain,tok8")
    parser.add_argument("--eps", default="inf,1")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--rules", default="off,lib")
    parser.add_argument("--kappa", type=float, default=2.0)
    parser.add_argument("--decay", type=float, default=0.9)
    parser.add_argument("--gate", type=float, default=0.0)
    parser.add_argument("--exempt", action="store_true", help="secant: not the intercept")
    parser.add_argument("--kint", type=float, default=np.inf,
                        help="with --exempt: the intercept's own kappa (inf: lr)")
    parser.add_argument("--chunk", type=int, default=10_000)
    parser.add_argument("--sgd", action="store_true")
    parser.add_argument("--time", type=int, default=0,
                        help="K: CPU seconds of K alternating passes (off, lib, SGD) instead")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    RULE.update(kappa=args.kappa, decay=args.decay, gate=args.gate, exempt=args.exempt,
                kint=args.kint)
    if set(args.rules.split(",")) - {"off", "lib"}:
        mom._KERNEL_WIDTH = None  # the numpy path (the prototypes patch it)
    if args.time:
        return timing(args)
    for name in args.data.split(","):
        chunk = 5_000 if name == "adult" else args.chunk
        for seed in (int(s) for s in args.seeds.split(",")):
            X, y, Xte, yte, norm = dataset(name, seed)
            if args.sgd:
                print(f"{name} seed={seed} sgd {sgd(X, y, Xte, yte, seed, chunk):.4f}",
                      flush=True)
            for eps in (float(e) for e in args.eps.split(",")):
                for rule in args.rules.split(","):
                    RULE["name"] = rule
                    acc, b = run(X, y, Xte, yte, norm, eps, seed, chunk)
                    print(f"{name} eps={eps:g} seed={seed} rule={rule} kappa={args.kappa:g} "
                          f"decay={args.decay:g} gate={args.gate:g} exempt={int(args.exempt)} "
                          f"kint={args.kint:g} b={b} accuracy={acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
