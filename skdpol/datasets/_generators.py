"""Stream generators: the seeds' synthetic set-ups, made locally from a seed."""

import numpy as np
from scipy import stats
from sklearn.utils import Bunch

__all__ = ["iter_chunks", "make_online_classification", "make_online_regression"]


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


def make_online_classification(n_samples=200_000, n_features=54, n_continuous=10,
                               n_classes=2, signal=1.0, random_state=None):
    """A covertype-like classification stream (seed 002 Section 5(c), shippable).

    Like the forest covertype data the seed uses: ``n_continuous``
    standardised measurements followed by two one-hot blocks (4 "areas",
    then the remaining columns as "soil types", drawn with skewed
    frequencies). Labels come from a multinomial logistic model whose
    coefficients are drawn once from ``random_state``; ``signal`` scales
    them (at 1.0 a non-private logistic regression reaches about 0.8-0.85
    test accuracy for two classes, depending on the seed).

    Parameters
    ----------
    n_samples : int, default=200_000
    n_features : int, default=54
        At least ``n_continuous + 8``.
    n_continuous : int, default=10
    n_classes : int, default=2
    signal : float, default=1.0
    random_state : int or None

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (n_samples, n_features), ``y`` (n_samples,) in
        ``range(n_classes)``, ``classes``, and ``data_norm``: a public row
        bound from the generating distribution (the 1 - 1e-6 quantile of the
        continuous block's norm, plus the two one-hot entries), not from the
        drawn rows.

    Examples
    --------
    >>> from skdpol.datasets import make_online_classification
    >>> data = make_online_classification(n_samples=1000, random_state=0)
    >>> data.X.shape, sorted(set(data.y.tolist()))
    ((1000, 54), [0, 1])
    """
    n_soil = n_features - n_continuous - 4
    if n_soil < 4:
        raise ValueError(
            f"n_features={n_features} must be at least n_continuous + 8 = {n_continuous + 8}."
        )
    model = np.random.default_rng([0 if random_state is None else random_state, 1])
    rng = np.random.default_rng(random_state)
    area_p = model.dirichlet(np.full(4, 2.0))
    soil_p = model.dirichlet(np.full(n_soil, 0.5))
    coef = signal * model.normal(size=(n_classes, n_features))
    coef[:, :n_continuous] *= 0.5
    continuous = rng.standard_normal((n_samples, n_continuous))
    X = np.zeros((n_samples, n_features))
    X[:, :n_continuous] = continuous
    rows = np.arange(n_samples)
    X[rows, n_continuous + rng.choice(4, size=n_samples, p=area_p)] = 1.0
    X[rows, n_continuous + 4 + rng.choice(n_soil, size=n_samples, p=soil_p)] = 1.0
    logits = X @ coef.T
    y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
    data_norm = float(np.sqrt(stats.chi2.ppf(1 - 1e-6, n_continuous) + 2.0))
    return Bunch(X=X, y=y, classes=np.arange(n_classes), coef=coef, data_norm=data_norm)


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
