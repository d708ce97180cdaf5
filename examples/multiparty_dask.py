"""Four parties learn one logistic model on a Dask cluster without pooling rows.

Seed 004's SGD2 through ``skdpol.distributed.MultiPartyPrivateSGD``. The rows
are generated here and split into four blocks of a dask array, one per party;
on the ``LocalCluster`` (two worker processes, loopback only) each block lives
on a worker, each round is one task per block, and only the party's noisy
gradient sum comes back to the coordinator (this process).

It runs both trust models:

* ``"local"``: each party adds the full noise; the guarantee holds even
  against the coordinator and the other parties;
* ``"secure-aggregation"``: each party adds a share of the noise and masks
  its message; only the sum (which carries the full noise) is learnt. The
  aggregation is simulated here: a deployment must provide pairwise key
  agreement the coordinator cannot read and dropout handling (see
  docs/distributed.md).

The same code runs against a real cluster: replace ``LocalCluster(...)`` by
the scheduler's address. ``random_state`` is left at None, as for a real
release: each party then draws its noise from OS entropy on its own worker.
Runs in well under a minute; nothing is downloaded.
"""

import numpy as np

import dask.array as da
from distributed import Client, LocalCluster

from skdpol import PrivateOnlineLogistic
from skdpol.distributed import MultiPartyPrivateSGD

N_PARTIES, ROWS_PER_PARTY, N_FEATURES = 4, 2_000, 8
DATA_NORM = 6.0  # a bound from the generating distribution, not from the rows


def make_data(seed):
    rng = np.random.default_rng(seed)
    n = N_PARTIES * ROWS_PER_PARTY
    X = rng.normal(size=(n, N_FEATURES))
    y = (X @ np.linspace(1.0, -1.0, N_FEATURES) + rng.logistic(size=n) > 0).astype(int)
    return X, y


def main():
    X, y = make_data(0)
    X_test, y_test = make_data(1)
    dX = da.from_array(X, chunks=(ROWS_PER_PARTY, N_FEATURES))  # one block per party
    dy = da.from_array(y, chunks=ROWS_PER_PARTY)
    common = dict(loss="log_loss", epsilon=1.0, delta=1e-6, data_norm=DATA_NORM)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster):
        for trust in ("local", "secure-aggregation"):
            est = MultiPartyPrivateSGD(trust_model=trust, **common)
            est.fit(dX, dy, classes=[0, 1])
            spent = est.privacy_spent_
            print(f"{trust:>18}: {est.n_parties_} parties, {est.n_rounds_} rounds, "
                  f"test accuracy {est.score(X_test, y_test):.3f}, epsilon spent "
                  f"{spent.epsilon:.3f} (delta {spent.delta:g}), "
                  f"{est.bytes_per_round_:,.0f} bytes per round")
    central = PrivateOnlineLogistic(epsilon=1.0, delta=1e-6, data_norm=DATA_NORM)
    central.fit(X, y, classes=[0, 1])
    print(f"{'central (pooled)':>18}: test accuracy {central.score(X_test, y_test):.3f}")
    public = est.public_model()  # the shareable release: no keys, no state
    print("published coefficients:", np.round(public.coef_.ravel(), 2))


if __name__ == "__main__":
    main()
