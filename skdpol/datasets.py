"""Stream generators, including the seeds' synthetic set-ups.

Every generator makes its data locally from a seed; nothing is downloaded.
"""

import numpy as np
from scipy import stats
from sklearn.utils import Bunch

__all__ = ["make_online_regression", "iter_chunks"]


def make_online_regression(n_samples=100_000, n_features=10, noise=0.01,
                           coef_norm=1.0, random_state=None):
    """Seed 002's synthetic online linear regression stream (Section 5).

    Rows g_t ~ N(0, I_d), a fixed x* of norm ``coef_norm`` drawn uniformly on
    the sphere, and labels y_t = g_t . x* + N(0, noise^2).

    Parameters
    ----------
    n_samples : int, default=100_000
    n_features : int, default=10
    noise : float, default=0.01
        Standard deviation of the label noise (the seed's 0.01).
    coef_norm : float, default=1.0
    random_state : int or None

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (n_samples, n_features), ``y`` (n_samples,), ``coef`` (x*),
        and public bounds chosen from the generating distribution (not from
        the drawn rows): ``data_norm``, the 1 - 1e-6 quantile of ||g||, and
        ``y_bound``, 5 standard deviations of y.

    Examples
    --------
    >>> from skdpol.datasets import make_online_regression
    >>> data = make_online_regression(n_samples=1000, random_state=0)
    >>> data.X.shape, data.y.shape
    ((1000, 10), (1000,))
    """
    rng = np.random.default_rng(random_state)
    coef = rng.standard_normal(n_features)
    coef *= coef_norm / np.linalg.norm(coef)
    X = rng.standard_normal((n_samples, n_features))
    y = X @ coef + noise * rng.standard_normal(n_samples)
    data_norm = float(np.sqrt(stats.chi2.ppf(1 - 1e-6, n_features)))
    y_bound = float(5.0 * np.sqrt(coef_norm**2 + noise**2))
    return Bunch(X=X, y=y, coef=coef, data_norm=data_norm, y_bound=y_bound)


def iter_chunks(X, y, chunk_size):
    """Yield ``(X_chunk, y_chunk)`` pairs of at most ``chunk_size`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.datasets import iter_chunks
    >>> [len(c) for c, _ in iter_chunks(np.zeros((5, 1)), np.zeros(5), 2)]
    [2, 2, 1]
    """
    for start in range(0, X.shape[0], chunk_size):
        yield X[start:start + chunk_size], y[start:start + chunk_size]
