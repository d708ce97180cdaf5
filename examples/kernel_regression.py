"""Private kernel regression on a non-linear stream, against a private linear model.

``sklearn.datasets.make_friedman1`` is a non-linear regression problem (a
sine of a product, a square, two linear terms, five useless features). The
stream is learned chunk by chunk with ``partial_fit`` by
``KernelPrivateOnlineRegressor`` (random Fourier features; with rounds of a
chunk its default ``algorithm="auto"`` runs noisy gradient descent on the
Huber loss) and by the linear ``PrivateOnlineRegressor`` (private ridge),
both at epsilon = 1 for the whole stream (every model published after every
chunk is covered), then by ``fit`` (one release, less noise). The kernel model is then published with
``public_model()``: its pickle holds the feature map's random frequencies and
the noisy weights, never a training row.

Privacy notes:

* ``y_bound`` and ``data_norm`` (both models) come from what is known
  about the data source (friedman1's features lie in [0, 1], its targets in
  about [-1, 30]), never from the rows.
* The kernel bandwidth ``gamma`` is a parameter; choosing it on the private
  rows would be a release of its own.

Runs in well under a minute; nothing is downloaded.
"""

import math
import pickle

from sklearn.datasets import make_friedman1

from skdpol import KernelPrivateOnlineRegressor, PrivateOnlineRegressor

N_TRAIN, CHUNK = 40_000, 5_000
DATA_NORM = math.sqrt(10)  # ten features, each in [0, 1]: a public bound


def main():
    X, y = make_friedman1(n_samples=N_TRAIN + 5_000, noise=1.0, random_state=0)
    X_train, y_train, X_test, y_test = X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]

    # one round per chunk: the kernel model's rounds are disjoint, so the whole
    # stream costs one round; the linear model's tree of private sums has
    # log2(8) + 1 levels instead of log2(40,000) + 1 with per-row rounds
    kernel = KernelPrivateOnlineRegressor(epsilon=1.0, data_norm=DATA_NORM, y_bound=30.0,
                                          gamma=0.5, n_components=256, batch_size=CHUNK,
                                          random_state=0)
    linear = PrivateOnlineRegressor(epsilon=1.0, data_norm=DATA_NORM, y_bound=30.0,
                                    horizon=N_TRAIN, batch_size=CHUNK, random_state=0)
    print("rows seen   kernel R^2   linear R^2")
    for start in range(0, N_TRAIN, CHUNK):
        rows = slice(start, start + CHUNK)
        kernel.partial_fit(X_train[rows], y_train[rows])
        linear.partial_fit(X_train[rows], y_train[rows])
        print(f"{kernel.n_samples_seen_:9d}   {kernel.score(X_test, y_test):10.3f}   "
              f"{linear.score(X_test, y_test):10.3f}")
    print("kernel privacy spent:", kernel.privacy_spent_)

    one_release = KernelPrivateOnlineRegressor(epsilon=1.0, data_norm=DATA_NORM, y_bound=30.0,
                                               gamma=0.5, n_components=256, random_state=0)
    one_release.fit(X_train, y_train)
    print(f"fit (one release, {one_release.algorithm_!r}) R^2: "
          f"{one_release.score(X_test, y_test):.3f}")

    public = pickle.loads(pickle.dumps(kernel.public_model()))
    print(f"public model R^2: {public.score(X_test, y_test):.3f} "
          f"({public.coef_.size} weights, no training rows)")


if __name__ == "__main__":
    main()
