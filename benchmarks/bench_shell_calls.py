"""How much Python runs inside skdpol for one steady ``partial_fit`` (issue 30).

Counts, with ``sys.setprofile``, the Python calls made inside the skdpol
package during one ``partial_fit`` of a stream already under way (rounds of
1,000 rows, chunks of 1,000, horizon known), next to scikit-learn's
``SGDRegressor.partial_fit`` / ``SGDClassifier.partial_fit`` on the same chunk:

* calls: Python functions entered whose code lives in the package;
* files: distinct files among them;
* re-entries: calls that enter a file the call chain had already left for
  another of the package's files (the "returns to a file it had left" of
  issue 30: a measure of how often control bounces between modules);
* depth: the deepest nesting of the package's frames.

Counts, not seconds: they are the same on any machine. Writes
``docs/benchmarks/shell_calls.md``; run ``python benchmarks/bench_shell_calls.py``.
"""

import os
import sys
from pathlib import Path

from _common import REPO, command_line, machine_lines, md_table

import numpy as np
import sklearn
from sklearn.linear_model import SGDClassifier, SGDRegressor

import skdpol
from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor

OUT = REPO / "docs" / "benchmarks" / "shell_calls.md"
CHUNK, WARM, D = 1000, 5, 20


def _package_dir(module):
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep


def profile_call(call, package, skip=()):
    """Calls, files, re-entries and depth inside ``package`` during ``call()``
    (files under one of the ``skip`` prefixes are not counted)."""
    calls, files, reentries, depth, deepest = 0, set(), 0, [0], [0]
    left = set()  # package files the current chain has entered and then left
    stack = []  # package file of each active package frame

    def hook(frame, event, arg):
        nonlocal calls, reentries
        if event not in ("call", "return"):
            return
        name = frame.f_code.co_filename
        if not name.startswith(package) or name.startswith(skip):
            return
        if event == "call":
            calls += 1
            files.add(name)
            if stack and name != stack[-1]:
                if name in left:
                    reentries += 1
                left.add(stack[-1])
            stack.append(name)
            deepest[0] = max(deepest[0], len(stack))
        elif stack:
            stack.pop()

    sys.setprofile(hook)
    try:
        call()
    finally:
        sys.setprofile(None)
    return calls, len(files), reentries, deepest[0]


def _stream(kind, chunk):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(chunk * (WARM + 1), D)) / np.sqrt(D)
    w = rng.normal(size=D)
    if kind == "regressor":
        return X, X @ w + 0.1 * rng.normal(size=len(X))
    return X, (X @ w + 0.3 * rng.logistic(size=len(X)) > 0).astype(int)


def measure(kind, batch_size, chunk):
    X, y = _stream(kind, chunk)
    n = len(X)
    if kind == "regressor":
        ours = PrivateOnlineRegressor(epsilon=1.0, delta=1e-6, data_norm=1.0, y_bound=4.0,
                                      batch_size=batch_size, horizon=n, random_state=0)
        theirs, fit_kw = SGDRegressor(random_state=0), {}
    else:
        ours = PrivateOnlineLogistic(epsilon=1.0, delta=1e-6, data_norm=1.0,
                                     batch_size=batch_size, horizon=n, random_state=0)
        theirs, fit_kw = SGDClassifier(loss="log_loss", random_state=0), {"classes": [0, 1]}
    for i in range(WARM):
        part = slice(i * chunk, (i + 1) * chunk)
        ours.partial_fit(X[part], y[part], **fit_kw)
        theirs.partial_fit(X[part], y[part], **fit_kw)
    last = slice(WARM * chunk, n)
    row_ours = profile_call(lambda: ours.partial_fit(X[last], y[last], **fit_kw),
                            _package_dir(skdpol))
    sk = _package_dir(sklearn)
    again = theirs.__class__(**theirs.get_params()).partial_fit(X[:CHUNK], y[:CHUNK], **fit_kw)
    row_theirs = profile_call(lambda: again.partial_fit(X[last], y[last], **fit_kw), sk)
    # the estimator's own code, without scikit-learn's shared validation and
    # parameter checks (skdpol calls those too; they are not counted for skdpol)
    own = profile_call(lambda: again.partial_fit(X[last], y[last], **fit_kw), sk,
                       skip=(sk + "utils" + os.sep, sk + "base.py"))
    return row_ours, row_theirs, own


def main():
    rows = []
    for kind, peer in (("regressor", "SGDRegressor"), ("classifier", "SGDClassifier")):
        name = "PrivateOnlineRegressor" if kind == "regressor" else "PrivateOnlineLogistic"
        for batch_size, chunk in ((CHUNK, CHUNK), ("auto", CHUNK), (CHUNK, 10 * CHUNK)):
            ours, theirs, own = measure(kind, batch_size, chunk)
            rows.append([f"`{name}.partial_fit`, batch_size={batch_size!r}, chunk {chunk:,} "
                         "(inside skdpol)", *ours])
        rows.append([f"`{peer}.partial_fit` (inside scikit-learn)", *theirs])
        rows.append([f"`{peer}.partial_fit` (its own files: no `sklearn/utils`, "
                     "`sklearn/base.py`)", *own])
    table = md_table(["one steady call, d = 20 (SGD: chunk of 10,000)", "calls", "files",
                      "re-entries", "depth"], rows)
    text = "\n".join([
        "# Python calls per steady `partial_fit`",
        "",
        "Counted with `sys.setprofile` (counts, not seconds: the same on any machine). "
        "A stream with a known horizon, after five chunks; the "
        "peer counts its calls inside scikit-learn. *Re-entries* are calls that enter "
        "a file the call chain had already left; *depth* is the deepest nesting of the "
        "package's frames. Issue 30's targets: at most 100 calls and depth 8.",
        "",
        table,
        "",
        f"Command: `{command_line(Path(__file__).name)}`",
        "",
        *machine_lines(),
        "",
    ])
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
