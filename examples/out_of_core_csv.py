"""Stream a CSV that does not fit in memory through PrivateOnlineRegressor.

The script writes a generated data set (200,000 rows, five named feature
columns and a target) to a temporary directory, then reads it back with
``pandas.read_csv(chunksize=...)`` and feeds every chunk to
``PrivateOnlineRegressor.partial_fit``. Only one chunk is in memory at a time;
the estimator's state is O(d^2 log T) whatever the length of the file.

Privacy notes:

* ``data_norm`` and ``y_bound`` are fixed in advance (here from the
  generating distribution, never from the file), and rows and labels are
  clipped to them, so the guarantee holds for any row in the file.
* ``horizon`` is the planned number of rows; the noise is calibrated so that
  every model published along the way, together, costs (epsilon, delta).
* ``random_state`` is left at None (fresh OS entropy), as for a real release.
* Each ``partial_fit`` call publishes a model; the held-out R^2 printed here
  is computed on separate, non-private test data.
* The live estimator's pickle is curator state (exact sums, noise key) and
  must stay private; only ``public_model()`` is saved for publication.

Runs in well under a minute (mostly writing the CSV); nothing is downloaded.
"""

import pickle
import tempfile
from pathlib import Path

import pandas as pd

from skdpol import PrivateOnlineRegressor
from skdpol.datasets import make_online_regression

N_TRAIN, N_TEST = 200_000, 10_000
CHUNKSIZE = 20_000
REPORT_EVERY = 3  # chunks
FEATURES = ["temperature", "humidity", "pressure", "wind_speed", "cloud_cover"]
TARGET = "demand"


def write_csv(directory):
    """Write train.csv and test.csv; return their paths and the public bounds."""
    data = make_online_regression(n_samples=N_TRAIN + N_TEST, n_features=len(FEATURES),
                                  noise=0.1, random_state=0)
    frame = pd.DataFrame(data.X, columns=FEATURES)
    frame[TARGET] = data.y
    train, test = directory / "train.csv", directory / "test.csv"
    frame.iloc[:N_TRAIN].to_csv(train, index=False)
    frame.iloc[N_TRAIN:].to_csv(test, index=False)
    # bounds chosen from the generating distribution, not from the rows
    return train, test, data.data_norm, data.y_bound


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        train, test, data_norm, y_bound = write_csv(tmp)
        test_frame = pd.read_csv(test)
        X_test, y_test = test_frame[FEATURES], test_frame[TARGET]

        est = PrivateOnlineRegressor(
            epsilon=1.0, delta=1e-6, data_norm=data_norm, y_bound=y_bound,
            horizon=N_TRAIN,  # planned rows: the budget covers all of them
        )
        print(f"streaming {train.name} in chunks of {CHUNKSIZE} rows "
              f"(data_norm={data_norm:.2f}, y_bound={y_bound:.2f})")
        for i, chunk in enumerate(pd.read_csv(train, chunksize=CHUNKSIZE), start=1):
            est.partial_fit(chunk[FEATURES], chunk[TARGET])
            if i % REPORT_EVERY == 0:
                spent = est.privacy_spent_
                print(f"  rows {est.n_samples_seen_:>7}: held-out R^2 = "
                      f"{est.score(X_test, y_test):.3f}, epsilon spent = "
                      f"{spent.epsilon:.3f} (delta = {spent.delta:g})")

        spent = est.privacy_spent_
        print(f"final, {est.n_samples_seen_} rows: held-out R^2 = "
              f"{est.score(X_test, y_test):.3f}")
        print(f"  {spent}")
        coefs = ", ".join(f"{name}={c:.3f}" for name, c in zip(est.feature_names_in_, est.coef_))
        print(f"  coef_: {coefs}; intercept_={est.intercept_:.3f}")

        # Publish the release only. pickle.dumps(est) would contain the exact
        # sums and the noise key: as sensitive as the CSV itself.
        public = est.public_model()
        path = tmp / "public_model.pkl"
        path.write_bytes(pickle.dumps(public))
        reloaded = pickle.loads(path.read_bytes())
        print(f"saved {path.name} ({path.stat().st_size} bytes): "
              f"held-out R^2 = {reloaded.score(X_test, y_test):.3f}, "
              f"epsilon = {reloaded.privacy_spent_.epsilon:.3f}")


if __name__ == "__main__":
    main()
