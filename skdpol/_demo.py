"""``python -m skdpol demo``: the four estimators on generated streams, with their cost.

Every stream is generated (nothing is downloaded) and its public bounds come
from the generating distribution, never from the rows, as they must for a
real release. Each estimator learns its stream chunk by chunk with
``partial_fit`` (one published model per chunk), then is scored on held-out
rows; ``privacy_spent_`` is the cost of everything it published.
"""

import math
import sys

import numpy as np
from sklearn.datasets import make_friedman1
from tqdm import tqdm

__all__ = ["run_demo"]


def _stream(est, X, y, chunk_size, name, progress, **fit_params):
    """partial_fit chunk by chunk under a progress bar; returns the estimator."""
    starts = range(0, X.shape[0], chunk_size)
    for start in tqdm(starts, desc=f"{name:<28}", unit="chunk", disable=not progress,
                      file=sys.stderr, leave=False):
        stop = start + chunk_size
        est.partial_fit(X[start:stop], None if y is None else y[start:stop], **fit_params)
    return est


def _regressor(n, chunk_size, epsilon, delta, seed, progress):
    from .datasets import make_online_regression
    from .linear_model import PrivateOnlineRegressor

    data = make_online_regression(n_samples=n + 5_000, noise=0.1, random_state=0)
    est = PrivateOnlineRegressor(epsilon=epsilon, delta=delta, data_norm=data.data_norm,
                                 y_bound=data.y_bound, horizon=n, random_state=seed)
    _stream(est, data.X[:n], data.y[:n], chunk_size, "PrivateOnlineRegressor", progress)
    return est, "test R^2", est.score(data.X[n:], data.y[n:])


def _logistic(n, chunk_size, epsilon, delta, seed, progress):
    from .datasets import make_online_classification
    from .linear_model import PrivateOnlineLogistic

    data = make_online_classification(n_samples=n + 5_000, random_state=0)
    est = PrivateOnlineLogistic(epsilon=epsilon, delta=delta, data_norm=data.data_norm,
                                horizon=n, random_state=seed)
    _stream(est, data.X[:n], data.y[:n], chunk_size, "PrivateOnlineLogistic", progress,
            classes=[0, 1])
    return est, "test accuracy", est.score(data.X[n:], data.y[n:])


def _kernel(n, chunk_size, epsilon, delta, seed, progress):
    from .linear_model import KernelPrivateOnlineRegressor

    # friedman1: 5 features uniform in [0, 1] (norm <= sqrt(5), public), targets
    # within about [-1, 30] (public from the formula)
    X, y = make_friedman1(n_samples=n + 5_000, n_features=5, noise=1.0, random_state=0)
    est = KernelPrivateOnlineRegressor(epsilon=epsilon, delta=delta, data_norm=math.sqrt(5),
                                       y_bound=30.0, horizon=n, batch_size=chunk_size,
                                       random_state=seed)
    _stream(est, X[:n], y[:n], chunk_size, "KernelPrivateOnlineRegressor", progress)
    return est, "test R^2", est.score(X[n:], y[n:])


def _selector(n, chunk_size, epsilon, delta, seed, progress):
    from .datasets import make_submodular_stream
    from .feature_selection import PrivateSubmodularSelector

    stream = make_submodular_stream(n_items=12, n_rounds=n, random_state=0)
    est = PrivateSubmodularSelector(cost=stream.cost, epsilon=epsilon, delta=delta,
                                    batch_size=20, horizon=n // 20, random_state=seed)
    _stream(est, stream.rows, None, chunk_size, "PrivateSubmodularSelector", progress)
    # the planted set is the known best choice: how many of the 12 items agree
    agree = int(np.sum(est.get_support() == stream.planted))
    return est, "items as planted (of 12)", agree


# (estimator, rows it streams as a fraction of --n-samples): the kernel and the
# selector are slower per row, so they get fewer rows to keep the demo short
DEMOS = ((_regressor, 1.0), (_logistic, 1.0), (_kernel, 0.3), (_selector, 0.1))


def run_demo(n_samples=100_000, chunk_size=10_000, epsilon=1.0, delta=1e-5, random_state=None,
             progress=True, out=None):
    """Stream generated data through the four estimators and print the cost of each.

    Parameters
    ----------
    n_samples : int, default=100_000
        Rows for the linear models; the kernel model gets 30 % of them and the
        selector 10 % (they are slower per row).
    chunk_size : int, default=10_000
        Rows per ``partial_fit`` call (one published model per call).
    epsilon, delta : float
        Every estimator's budget.
    random_state : int or None, default=None
        None draws fresh noise (the only choice for real releases).
    progress : bool, default=True
        Show a progress bar per estimator (on stderr).
    out : file-like, default=None
        Where to print; None means the ``sys.stdout`` of the call (read
        at call time, so redirections made after import are honoured).

    Returns
    -------
    rows : list of tuple
        (estimator name, rows streamed, metric name, metric, privacy_spent_).

    Examples
    --------
    >>> import io
    >>> from skdpol._demo import run_demo
    >>> rows = run_demo(n_samples=20_000, chunk_size=5_000, random_state=0,
    ...                 progress=False, out=io.StringIO())
    >>> [name for name, *_ in rows]  # doctest: +NORMALIZE_WHITESPACE
    ['PrivateOnlineRegressor', 'PrivateOnlineLogistic', 'KernelPrivateOnlineRegressor',
     'PrivateSubmodularSelector']
    >>> all(spent.epsilon <= 1.0 + 1e-9 for *_, spent in rows)
    True
    """
    out = sys.stdout if out is None else out
    print(f"Four private estimators, each on a generated stream, epsilon = {epsilon:g}, "
          f"delta = {delta:g}; bounds come from the generators, not the rows.", file=out)
    if random_state is None:
        print("Noise is drawn fresh (random_state=None): scores vary from run to run.",
              file=out)
    rows = []
    for demo, share in DEMOS:
        n = max(int(n_samples * share) // 20 * 20, 20)  # whole rounds for the selector
        est, metric, value = demo(n, min(chunk_size, n), epsilon, delta, random_state, progress)
        rows.append((type(est).__name__, n, metric, value, est.privacy_spent_))
    width = max(len(name) for name, *_ in rows)
    print(f"\n{'estimator':<{width}}  {'rows':>7}  {'held-out score':<32}  epsilon spent",
          file=out)
    for name, n, metric, value, spent in rows:
        score = f"{metric} {value:.3f}" if isinstance(value, float) else f"{metric} {value}"
        print(f"{name:<{width}}  {n:>7,}  {score:<32}  {spent.epsilon:.3f} "
              f"(delta {spent.delta:g})", file=out)
    print("\nEach estimator published one model per chunk; epsilon spent covers all of "
          "them.\nShare est.public_model(): the live estimator's pickle holds secret state "
          "(exact sums, the noise generator).", file=out)
    return rows
