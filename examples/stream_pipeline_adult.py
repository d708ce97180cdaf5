"""UCI Adult streamed from its CSV in chunks through a stream pipeline.

``make_stream_pipeline(from_schema(...).preprocessor, PrivateOnlineLogistic(...))``
is a scikit-learn ``Pipeline`` with ``partial_fit``: each chunk that
``pandas.read_csv(chunksize=...)`` yields goes through the public
preprocessing (numeric columns clipped to their public ranges and mapped to
[-1, 1], public bins, one-hot indicators of the documented categories) and
into the learner's ``partial_fit``. No chunk is transformed by hand; only one
is in memory at a time.

Privacy notes:

* The preprocessing and the bounds (``data_norm``) come from Adult's public
  schema (``skdpol/schemas/adult.json``: adult.names and the CPS coding),
  never from the rows. The stream pipeline refuses any earlier step that
  would learn from the rows (a ``StandardScaler``, say), naming it.
* ``horizon`` is the number of training rows (public: Adult's documented
  split), so every model published along the way, together, costs
  (epsilon, delta); ``classes`` are the schema's.
* ``random_state`` is left at None (fresh OS entropy), as for a real release.
* The accuracy printed is on Adult's separate test rows (``adult.test``).
* The live pipeline's pickle holds the learner's curator state and must stay
  private; ``public_model()`` (the public steps and the learner's released
  parameters) is what is saved for publication.

Reads ``adult.csv.gz`` from :func:`skdpol.datasets.data_home` (``$SKDPOL_DATA``
or ``shared/data``); skips cleanly when it is absent (nothing is downloaded).
Runs in a few seconds.
"""

import pickle
import sys
import tempfile
from pathlib import Path

import pandas as pd

from skdpol import PrivateOnlineLogistic
from skdpol.datasets import ADULT_N_TRAIN, data_home, table_schema
from skdpol.pipeline import make_stream_pipeline
from skdpol.preprocessing import from_schema

CHUNKSIZE = 5_000
EPSILON, DELTA = 1.0, 1e-6


def main():
    folder = data_home()
    if folder is None or not (folder / "adult.csv.gz").is_file():
        print("skipped: adult.csv.gz not found (set $SKDPOL_DATA; nothing is downloaded)")
        return 0
    path = folder / "adult.csv.gz"
    pre = from_schema(table_schema("adult"))
    test = pd.read_csv(path, skiprows=range(1, ADULT_N_TRAIN + 1))  # adult.test's rows
    X_test, y_test = test[pre.features], test[pre.label]

    pipe = make_stream_pipeline(
        pre.preprocessor,
        PrivateOnlineLogistic(epsilon=EPSILON, delta=DELTA, data_norm=pre.data_norm,
                              horizon=ADULT_N_TRAIN))
    print(f"streaming the {ADULT_N_TRAIN} training rows of {path.name} in chunks of "
          f"{CHUNKSIZE} (data_norm={pre.data_norm:.3f} from the schema)")
    for chunk in pd.read_csv(path, nrows=ADULT_N_TRAIN, chunksize=CHUNKSIZE):
        # classes: the schema's public label set (needed on the first call)
        pipe.partial_fit(chunk[pre.features], chunk[pre.label], classes=pre.classes)
        spent = pipe[-1].privacy_spent_
        print(f"  rows {pipe[-1].n_samples_seen_:>6}: test accuracy "
              f"{pipe.score(X_test, y_test):.3f}, epsilon spent {spent.epsilon:.3f}")
    majority = (y_test == "<=50K").mean()
    print(f"final: test accuracy {pipe.score(X_test, y_test):.3f} "
          f"(majority class {majority:.3f}); {pipe[-1].privacy_spent_}")

    # Publish the release only: the public steps and the learner's public model.
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / "adult_public_pipeline.pkl"
        saved.write_bytes(pickle.dumps(pipe.public_model()))
        public = pickle.loads(saved.read_bytes())
        print(f"saved {saved.name} ({saved.stat().st_size} bytes): test accuracy "
              f"{public.score(X_test, y_test):.3f}, epsilon {public.privacy_spent_.epsilon:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
