"""Tune PrivateOnlineLogistic with GridSearchCV over ``epsilon`` and ``algorithm``.

A covertype-like stream (``skdpol.datasets.make_online_classification``,
54 features) goes through a scikit-learn Pipeline: a scaling step with a
*public* constant (a fitted StandardScaler would learn means and variances
from the private rows and release them through the model), then
``PrivateOnlineLogistic``. GridSearchCV sweeps ``epsilon`` and ``algorithm``
with 3-fold cross-validation, then the chosen configuration learns the
training stream chunk by chunk with ``partial_fit`` and is scored on
held-out rows.

Privacy notes:

* Model selection is itself a release. Each candidate's ``fit`` is
  (epsilon, delta)-DP, but GridSearchCV fits every candidate on every fold
  and reports which scored best, so the search as a whole costs the sum over
  all the fits that touch a row (here 3 algorithms x 3 epsilons x 2 folds
  per row), and the selection adds to that. (``fit`` uses the same one-release
  POL for "ftrl" and "igd", so those two rows of the table coincide.) Tune on public or synthetic
  data shaped like the private stream (as here), or budget for it.
* ``data_norm`` comes from the generating distribution, never from the data.
* ``classes`` is passed explicitly, so the label set is public and nothing
  is read off the labels: ``grid.fit(X, y, privateonlinelogistic__classes=[0, 1])``
  routes it to the Pipeline's logistic step in every fit of the search (no
  ``PrivacyLeakWarning``), and ``partial_fit(..., classes=[0, 1])`` does the
  same for the stream.
* For what the search as a whole costs, and how to record it across fits,
  see ``docs/guide/model_selection.md``.

Runs in about a minute; nothing is downloaded.
"""

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpol import PrivateOnlineLogistic
from skdpol.datasets import iter_chunks, make_online_classification
from skdpol.pipeline import check_public_pipeline

SCALE = 0.5  # a public constant: halve every feature


def scale(X):
    return X * SCALE


def main():
    data = make_online_classification(n_samples=120_000, random_state=0)
    X, y = data.X[:100_000], data.y[:100_000]
    X_test, y_test = data.X[100_000:], data.y[100_000:]
    data_norm = data.data_norm * SCALE  # the bound after scaling

    pipe = make_pipeline(FunctionTransformer(scale),
                         PrivateOnlineLogistic(data_norm=data_norm, random_state=0))
    # every step public or private (a StandardScaler here would publish the rows'
    # exact mean with the model): raises PrivacyLeakError naming the step otherwise
    check_public_pipeline(pipe)
    grid = GridSearchCV(
        pipe,
        {"privateonlinelogistic__epsilon": [0.5, 1.0, 2.0],
         "privateonlinelogistic__algorithm": ["ftrl", "igd", "mi-ogd"]},
        cv=3,
    )
    # tune on a proxy sample, not the stream; the label set is public: pass it
    # to the Pipeline's step so that no fit reads it off y
    grid.fit(X[:30_000], y[:30_000], privateonlinelogistic__classes=[0, 1])

    table = pd.DataFrame(grid.cv_results_)[
        ["param_privateonlinelogistic__algorithm", "param_privateonlinelogistic__epsilon",
         "mean_test_score", "std_test_score"]]
    table.columns = ["algorithm", "epsilon", "cv accuracy", "std"]
    print(table.sort_values(["algorithm", "epsilon"]).to_string(index=False))
    print("(fit publishes one model: POL, the averaged implicit-gradient iterate, for "
          "both 'ftrl' and 'igd', so their rows are the same release)")
    best = grid.best_params_
    print("best:", best)

    # stream the training rows with the chosen algorithm, at epsilon = 1
    # (a Pipeline has no partial_fit, so the public scaling is applied by hand)
    model = PrivateOnlineLogistic(data_norm=data_norm, epsilon=1.0, delta=1e-6, horizon=len(X),
                                  algorithm=best["privateonlinelogistic__algorithm"])
    for X_chunk, y_chunk in iter_chunks(X, y, 10_000):
        model.partial_fit(scale(X_chunk), y_chunk, classes=[0, 1])
    print(f"streamed {model.n_samples_seen_} rows: held-out accuracy "
          f"{model.score(scale(X_test), y_test):.3f}, privacy spent {model.privacy_spent_}")
    assert model.privacy_spent_.epsilon <= 1.0 + 1e-9
    assert np.isfinite(model.coef_).all()


if __name__ == "__main__":
    main()
