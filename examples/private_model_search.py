"""Choose PrivateOnlineLogistic's hyper-parameters privately, under one budget.

``PrivateHyperparameterSearch`` runs a random number of candidates (geometric,
mean 5) drawn from the grid, each fitted on the training rows and scored with
noise on a held-out split (by default the Brier score of its probabilities),
and releases only the best: its parameters, its
public model and its noisy score, all covered by epsilon 1 (delta 1e-5) in
total -- the choice included (Papernot & Steinke 2022). The ledger holds one
entry. Generated data (nothing is downloaded); runs in well under a minute.
"""

import os
import tempfile

import numpy as np

from skdpol import PrivacyLedger, PrivateOnlineLogistic
from skdpol.model_selection import PrivateHyperparameterSearch


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12_000, 6))
    y = (X @ [2.0, -1.0, 0.5, 0.0, 1.0, -0.5] + rng.logistic(size=12_000) > 0).astype(int)
    X_test, y_test = X[10_000:], y[10_000:]
    X, y = X[:10_000], y[:10_000]

    ledger = PrivacyLedger(os.path.join(tempfile.mkdtemp(), "search.sqlite"),
                           budget=(1.0, 1e-5))
    search = PrivateHyperparameterSearch(
        PrivateOnlineLogistic(data_norm=5.0),  # a public bound on the rows
        {"alpha": [1e-3, 1e-2, 1e-1], "algorithm": ["noisy-gd", "igd"]},
        epsilon=1.0, delta=1e-5, mean_runs=5, ledger=ledger)
    search.fit(X, y, classes=[0, 1])  # the label set is public
    print("chosen:", search.best_params_)
    # the default score: one minus the Brier score of the probabilities (in [0, 1])
    print(f"noisy validation score (1 - Brier): {search.best_score_:.3f}")
    print(f"test accuracy: {search.score(X_test, y_test):.3f}")
    print("spent:", search.privacy_spent_)
    print("ledger:", ledger.spent())


if __name__ == "__main__":
    main()
