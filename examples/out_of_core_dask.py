"""Stream a folder of CSV files through PrivateOnlineRegressor on a Dask cluster.

The script writes a generated data set as four CSV files (20,000 rows each,
five named feature columns and a target) into a temporary folder, reads the
folder lazily with ``dask.dataframe.read_csv`` (each file is one or more
partitions: the data is larger than one block) and lets
``dask_ml.wrappers.Incremental`` call ``partial_fit`` block by block on a
``LocalCluster`` (two worker processes, loopback only). Only one block is in
a worker's memory at a time.

Privacy notes:

* This is *central* differential privacy: the estimator, with its curator
  state (exact sums, noise keys), travels from task to task inside the
  cluster, so the cluster must be trusted with the raw rows. What leaves it
  is ``public_model()`` (parameters and ``privacy_spent_`` only).
* ``data_norm`` and ``y_bound`` come from the generating distribution, never
  from the files; ``horizon`` is the number of rows (public), counted from
  the partitions' lengths.
* ``shuffle_blocks=False`` keeps the files' order; ``random_state`` is None,
  as for a real release.

Runs in well under a minute; nothing is downloaded.
"""

import tempfile
from pathlib import Path

import dask.dataframe as dd
import pandas as pd
from dask_ml.wrappers import Incremental
from distributed import Client, LocalCluster

from skdpol import PrivateOnlineRegressor
from skdpol.datasets import make_online_regression

N_FILES, ROWS_PER_FILE, N_TEST = 4, 20_000, 10_000
FEATURES = ["temperature", "humidity", "pressure", "wind_speed", "cloud_cover"]
TARGET = "demand"


def write_folder(directory):
    """Four training CSV files and one test file; returns the public bounds."""
    data = make_online_regression(n_samples=N_FILES * ROWS_PER_FILE + N_TEST,
                                  n_features=len(FEATURES), noise=0.1, random_state=0)
    frame = pd.DataFrame(data.X, columns=FEATURES)
    frame[TARGET] = data.y
    (directory / "train").mkdir()
    for i in range(N_FILES):
        part = frame.iloc[i * ROWS_PER_FILE:(i + 1) * ROWS_PER_FILE]
        part.to_csv(directory / "train" / f"part-{i:02d}.csv", index=False)
    frame.iloc[N_FILES * ROWS_PER_FILE:].to_csv(directory / "test.csv", index=False)
    return data.data_norm, data.y_bound


def main():
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data_norm, y_bound = write_folder(folder)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster):
            frame = dd.read_csv(str(folder / "train" / "*.csv"), blocksize="1MB")
            X = frame[FEATURES].to_dask_array(lengths=True)  # row counts: public
            y = frame[TARGET].to_dask_array(lengths=True)
            n_rows = int(X.shape[0])
            print(f"{N_FILES} files, {X.numblocks[0]} blocks, {n_rows} rows")
            est = PrivateOnlineRegressor(epsilon=1.0, delta=1e-7, data_norm=data_norm,
                                         y_bound=y_bound, horizon=n_rows)
            model = Incremental(est, shuffle_blocks=False).fit(X, y).estimator_
        test = pd.read_csv(folder / "test.csv")
        public = model.public_model()
        print(f"rows seen {model.n_samples_seen_}, releases {public.privacy_spent_.releases}, "
              f"epsilon spent {public.privacy_spent_.epsilon:.3f}")
        print(f"held-out R^2 of the published model: "
              f"{public.score(test[FEATURES].to_numpy(), test[TARGET].to_numpy()):.3f}")


if __name__ == "__main__":
    main()
