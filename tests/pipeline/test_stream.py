"""skdpol.pipeline.StreamPipeline: partial_fit through public steps into a private learner."""

import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from skdpol import (BudgetExhaustedError, PrivacyLeakError, PrivateOnlineLogistic,
                    PrivateOnlineRegressor)
from skdpol.pipeline import PublicPipeline, StreamPipeline, declare_public, make_stream_pipeline
from skdpol.preprocessing import (PrivateStandardScaler, PublicRangeScaler,
                                  PublicStandardScaler, from_schema)

N = 3_000
SCHEMA = {
    "label": {"name": "y", "classes": [0, 1]},
    "columns": {
        "age": {"type": "numeric", "range": [17, 90], "bins": [30, 50]},
        "hours": {"type": "numeric", "range": [1, 99]},
        "sex": {"type": "categorical", "categories": ["F", "M"]},
    },
}


def _frame(n=N, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.uniform(17, 90, n), "hours": rng.uniform(1, 99, n),
                          "sex": rng.choice(["F", "M"], n)})
    y = ((frame.age - 40) / 20 + (frame.sex == "M") - 0.5 + rng.normal(0, 0.5, n) > 0)
    return frame, y.astype(int).to_numpy()


def _columns():
    return make_column_transformer(
        (PublicRangeScaler(bounds=([17, 1], [90, 99])), ["age", "hours"]),
        (OneHotEncoder(categories=[["F", "M"]], handle_unknown="ignore", sparse_output=False),
         ["sex"]),
        sparse_threshold=0)


def _learner(**kw):
    return PrivateOnlineLogistic(**{"epsilon": 1.0, "data_norm": np.sqrt(3), "horizon": N,
                                    "random_state": 0, **kw})


def _chunks(X, y, size=1_000):
    for start in range(0, len(y), size):
        yield X[start:start + size], y[start:start + size]


# ------------------------------------------------------------------ equality with the hand loop
@pytest.mark.parametrize("pre", ["columns", "schema"])
def test_partial_fit_is_bit_identical_to_transforming_chunks_by_hand(pre):
    X, y = _frame()
    steps = _columns() if pre == "columns" else from_schema(SCHEMA).preprocessor
    data_norm = np.sqrt(3) if pre == "columns" else from_schema(SCHEMA).data_norm
    pipe = make_stream_pipeline(clone(steps), _learner(data_norm=data_norm))
    for Xc, yc in _chunks(X, y):
        assert pipe.partial_fit(Xc, yc, classes=[0, 1]) is pipe

    by_hand, model = clone(steps), _learner(data_norm=data_norm)
    for i, (Xc, yc) in enumerate(_chunks(X, y)):
        Z = by_hand.fit_transform(Xc) if i == 0 else by_hand.transform(Xc)
        model.partial_fit(Z, yc, classes=[0, 1])
    assert pipe[-1].n_samples_seen_ == N
    np.testing.assert_array_equal(pipe[-1].coef_, model.coef_)
    np.testing.assert_array_equal(pipe[-1].intercept_, model.intercept_)
    np.testing.assert_array_equal(pipe.predict(X), model.predict(by_hand.transform(X)))
    np.testing.assert_array_equal(pipe.decision_function(X),
                                  model.decision_function(by_hand.transform(X)))
    np.testing.assert_array_equal(pipe.predict_proba(X), model.predict_proba(by_hand.transform(X)))
    assert pipe.score(X, y) == model.score(by_hand.transform(X), y)
    np.testing.assert_array_equal(pipe.classes_, [0, 1])


def test_regressor_stream_matches_the_hand_loop():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(N, 3))
    y = X @ [0.1, -0.05, 0.02] + rng.normal(0, 0.1, N)
    kw = dict(epsilon=1.0, data_norm=np.sqrt(3), y_bound=2.0, horizon=N, random_state=0)
    pipe = make_stream_pipeline(PublicRangeScaler(bounds=(0, 10)), PrivateOnlineRegressor(**kw))
    model = PrivateOnlineRegressor(**kw)
    for Xc, yc in _chunks(X, y):
        pipe.partial_fit(Xc, yc)
        model.partial_fit(2 * Xc / 10 - 1, yc)
    np.testing.assert_array_equal(pipe[-1].coef_, model.coef_)


def test_public_steps_fitted_on_any_chunk_transform_alike():
    """The fitted public steps hold nothing of the chunk they were fitted on."""
    (X, y), (other, y_other) = _frame(seed=0), _frame(seed=5)
    for steps in (_columns(), from_schema(SCHEMA).preprocessor):
        a = make_stream_pipeline(clone(steps), _learner()).partial_fit(
            X[:7], y[:7], classes=[0, 1])
        b = make_stream_pipeline(clone(steps), _learner()).partial_fit(
            other[-500:], y_other[-500:], classes=[0, 1])
        np.testing.assert_array_equal(a[0].transform(X), b[0].transform(X))
        np.testing.assert_array_equal(a[0].get_feature_names_out(), b[0].get_feature_names_out())
        assert pickle.dumps(a[0]) == pickle.dumps(b[0])  # the whole fitted state


# ------------------------------------------------------------------ routing
def test_classes_routed_bare_or_by_step_name():
    X, y = _frame()
    bare, named = make_stream_pipeline(_columns(), _learner()), make_stream_pipeline(
        _columns(), _learner())
    for Xc, yc in _chunks(X, y):
        bare.partial_fit(Xc, yc, classes=[0, 1])
        named.partial_fit(Xc, yc, privateonlinelogistic__classes=[0, 1])
    np.testing.assert_array_equal(bare[-1].coef_, named[-1].coef_)


def test_bad_parameter_names_are_refused_before_anything_changes():
    X, y = _frame()
    pipe = make_stream_pipeline(_columns(), _learner())
    with pytest.raises(ValueError, match="'nosuchstep__classes' names no step"):
        pipe.partial_fit(X, y, nosuchstep__classes=[0, 1])
    with pytest.raises(ValueError, match="'classes' is given twice"):
        pipe.partial_fit(X, y, classes=[0, 1], privateonlinelogistic__classes=[0, 1])
    with pytest.raises(ValueError, match="classes must be passed"):
        pipe.partial_fit(X, y)
    assert not hasattr(pipe[0], "transformers_") and not hasattr(pipe[-1], "coef_")


class _Tagged(FunctionTransformer):
    """A public step whose fit takes a parameter (recorded)."""

    def fit(self, X, y=None, tag=None):
        self.tag_ = tag
        return super().fit(X, y)


def test_earlier_step_parameters_go_to_its_fit_at_the_start_of_the_stream():
    X, y = _frame()
    step = declare_public(_Tagged(), reason="identity")
    pipe = make_stream_pipeline(_columns(), step, _learner())
    pipe.partial_fit(X[:100], y[:100], classes=[0, 1], declaredpublic__tag="start")
    pipe.partial_fit(X[100:200], y[100:200], declaredpublic__tag="later")  # fitted: unused
    assert pipe[1].estimator_.tag_ == "start"


def test_metadata_routing_needs_the_learners_request():
    X, y = _frame()
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_stream_pipeline(_columns(), _learner())
        with pytest.raises(ValueError, match="classes"):
            pipe.partial_fit(X, y, classes=[0, 1])  # not requested: sklearn's error
        assert not hasattr(pipe[-1], "coef_")
        pipe[-1].set_partial_fit_request(classes=True)
        pipe.partial_fit(X, y, classes=[0, 1])
        assert pipe[-1].n_samples_seen_ == N
        routing = pipe.get_metadata_routing()
        assert "partial_fit" in str(routing)


# ------------------------------------------------------------------ refusals and bad input
def test_leaking_step_refused_naming_it():
    with pytest.raises(PrivacyLeakError, match="step 'standardscaler'"):
        make_stream_pipeline(StandardScaler(), _learner())
    X, y = _frame()
    nested = make_column_transformer((StandardScaler(), ["age"]), remainder="drop")
    pipe = StreamPipeline([("pre", nested), ("model", _learner())])
    for call in (pipe.partial_fit, pipe.fit):
        with pytest.raises(PrivacyLeakError, match="step 'pre > standardscaler'"):
            call(X, y, classes=[0, 1])
    assert not hasattr(pipe[0], "transformers_") and not hasattr(pipe[-1], "coef_")


def test_private_step_streams_only_frozen():
    X, y = _frame()
    rng_X = X[["age", "hours"]].to_numpy()
    scaler = PrivateStandardScaler(epsilon=1.0, bounds=([17, 1], [90, 99]), random_state=0)
    pipe = make_stream_pipeline(scaler, _learner(data_norm=3.0))
    with pytest.raises(PrivacyLeakError, match="step 'privatestandardscaler'.*FrozenEstimator"):
        pipe.partial_fit(rng_X, y, classes=[0, 1])
    pipe.fit(rng_X, y, classes=[0, 1])  # one release each, as Pipeline.fit
    frozen = FrozenEstimator(clone(scaler).fit(rng_X[:500]))  # its own release, outside
    stream = make_stream_pipeline(frozen, _learner(data_norm=3.0))
    stream.partial_fit(rng_X, y, classes=[0, 1])
    # published as the scaler's own release: no seed (it regenerates the
    # noise), no ledger, the same transform and predictions
    public = pickle.loads(pickle.dumps(stream.public_model()))
    assert isinstance(public[0], PublicStandardScaler)
    assert "random_state" not in public[0].get_params()
    np.testing.assert_array_equal(public.predict(rng_X), stream.predict(rng_X))
    np.testing.assert_array_equal(public[0].transform(rng_X), frozen.transform(rng_X))
    assert stream[0] is frozen  # the stream keeps its step


def test_frozen_private_steps_are_published_inside_composites():
    X, y = _frame()
    scaler = PrivateStandardScaler(bounds=([17, 1], [90, 99]), random_state=0)
    frozen = FrozenEstimator(scaler.fit(X[["age", "hours"]].to_numpy()[:500]))
    pre = make_column_transformer((frozen, ["age", "hours"]), remainder="drop",
                                  sparse_threshold=0)
    stream = make_stream_pipeline(pre, _learner(data_norm=3.0))
    stream.partial_fit(X, y, classes=[0, 1])
    public = stream.public_model()
    fitted = public[0].transformers_[0][1]
    assert isinstance(fitted, PublicStandardScaler) and isinstance(
        public[0].transformers[0][1], PublicStandardScaler)
    assert isinstance(stream[0].transformers_[0][1], FrozenEstimator)  # unchanged
    np.testing.assert_array_equal(public.predict(X), stream.predict(X))
    assert "random_state=0" not in repr(pickle.loads(pickle.dumps(public)))


def test_a_frozen_private_step_without_a_release_is_not_published():
    class Secret(FunctionTransformer):  # a private skdpol estimator with no public_model()
        __module__ = "skdpol.fake"

        def __init__(self, ledger=None):
            self.ledger = ledger
            super().__init__()

        def fit(self, X, y=None):
            self.privacy_spent_ = None  # released (a fitted private step)
            return super().fit(X, y)

    X, y = _frame()
    Xn = X[["age", "hours"]].to_numpy() / 100.0
    stream = StreamPipeline([("secret", FrozenEstimator(Secret().fit(Xn))),
                             ("model", _learner(data_norm=3.0))])
    stream.partial_fit(Xn, y, classes=[0, 1])
    with pytest.raises(ValueError, match="step 'secret' holds a skdpol private estimator with "
                                         "no public_model"):
        stream.public_model()


def test_no_partial_fit_on_the_final_step():
    pipe = make_stream_pipeline(PublicRangeScaler(bounds=(0, 1)), LogisticRegression())
    assert not hasattr(pipe, "partial_fit")
    with pytest.raises(AttributeError) as error:
        pipe.partial_fit(np.zeros((2, 1)), [0, 1])
    # scikit-learn's available_if raises its own text, from ours (shown in the traceback)
    assert "final step 'logisticregression' (LogisticRegression) has no partial_fit" in str(
        error.value.__cause__)


def test_mismatched_width_refused_with_everything_unchanged():
    rng = np.random.default_rng(0)
    X, y = rng.uniform(0, 1, (400, 2)), rng.integers(0, 2, 400)
    pipe = make_stream_pipeline(PublicRangeScaler(bounds=(0, 1)), _learner())
    pipe.partial_fit(X[:200], y[:200], classes=[0, 1])
    before = pickle.dumps(pipe)
    with pytest.raises(ValueError, match="step 'publicrangescaler'.*3 features"):
        pipe.partial_fit(np.hstack([X, X[:, :1]])[200:], y[200:])
    with pytest.raises(ValueError):
        pipe.partial_fit(X[200:], np.full(200, 7))  # a label outside classes
    assert pickle.dumps(pipe) == before
    # a failing first chunk leaves the steps unfitted and the objects as given
    fresh = make_stream_pipeline(PublicRangeScaler(bounds=(0, 1)), _learner())
    first = fresh[0]
    with pytest.raises(ValueError):
        fresh.partial_fit(X, np.full(400, 7), classes=[0, 1])
    assert fresh[0] is first and not hasattr(first, "n_features_in_")


def test_flush_is_the_learners_flush():
    """flush() learns the waiting rows as the hand loop's learner.flush() does."""
    X, y = _frame()
    n = 2_500  # two full rounds of 1,000 and 500 rows waiting (no horizon)
    pipe = make_stream_pipeline(_columns(), _learner(horizon=None, batch_size=1_000))
    by_hand, model = _columns(), _learner(horizon=None, batch_size=1_000)
    for i, (Xc, yc) in enumerate(_chunks(X[:n], y[:n])):
        pipe.partial_fit(Xc, yc, classes=[0, 1])
        model.partial_fit(by_hand.fit_transform(Xc) if i == 0 else by_hand.transform(Xc), yc,
                          classes=[0, 1])
    assert pipe[-1].n_samples_waiting_ == 500
    assert pipe.flush() is pipe
    model.flush()
    assert (pipe[-1].n_samples_learned_, pipe[-1].n_samples_waiting_) == (n, 0)
    np.testing.assert_array_equal(pipe[-1].coef_, model.coef_)
    np.testing.assert_array_equal(pipe[-1].intercept_, model.intercept_)
    assert pipe[-1].privacy_spent_ == model.privacy_spent_
    # the stream is over: partial_fit refuses and changes nothing
    before = pickle.dumps(pipe)
    with pytest.raises(BudgetExhaustedError):
        pipe.partial_fit(X[n:], y[n:])
    assert pickle.dumps(pipe) == before


def test_flush_needs_a_started_stream_and_a_learner_with_flush():
    with pytest.raises(NotFittedError):
        make_stream_pipeline(_columns(), _learner()).flush()
    pipe = make_stream_pipeline(PublicRangeScaler(bounds=(0, 1)), LogisticRegression())
    assert not hasattr(pipe, "flush")
    with pytest.raises(AttributeError) as error:
        pipe.flush()
    assert "final step 'logisticregression' (LogisticRegression) has no flush" in str(
        error.value.__cause__)


# ------------------------------------------------------------------ fit, search, dask
def test_fit_is_pipeline_fit():
    X, y = _frame()
    stream = make_stream_pipeline(_columns(), _learner()).fit(X, y, classes=[0, 1])
    plain = make_pipeline(_columns(), _learner()).fit(X, y, privateonlinelogistic__classes=[0, 1])
    np.testing.assert_array_equal(stream[-1].coef_, plain[-1].coef_)


def test_grid_search_sweeps_the_learner():
    X, y = _frame()
    pipe = make_stream_pipeline(_columns(), _learner(horizon=None))
    search = GridSearchCV(pipe, {"privateonlinelogistic__epsilon": [0.5, 2.0]}, cv=2,
                          error_score="raise").fit(X, y, classes=[0, 1])
    assert isinstance(search.best_estimator_, StreamPipeline)
    assert search.best_params_["privateonlinelogistic__epsilon"] in (0.5, 2.0)
    leaky = StreamPipeline([("pre", StandardScaler()), ("model", _learner())])
    with pytest.raises(PrivacyLeakError, match="step 'pre'"):
        GridSearchCV(leaky, {"model__epsilon": [1.0]}, cv=2, error_score="raise").fit(
            X[["age", "hours"]], y, classes=[0, 1])


def test_public_model_is_the_public_pipeline():
    X, y = _frame()
    pipe = make_stream_pipeline(from_schema(SCHEMA).preprocessor,
                                _learner(data_norm=from_schema(SCHEMA).data_norm))
    for Xc, yc in _chunks(X, y):
        pipe.partial_fit(Xc, yc, classes=[0, 1])
    public = pickle.loads(pickle.dumps(pipe.public_model()))
    assert type(public) is PublicPipeline and not hasattr(public[-1], "_stream")
    np.testing.assert_array_equal(public.predict_proba(X), pipe.predict_proba(X))
    np.testing.assert_array_equal(public.predict(X), pipe.predict(X))
    assert public.score(X, y) == pipe.score(X, y)
    assert public.privacy_spent_ == pipe[-1].privacy_spent_
    with pytest.raises(TypeError, match="release"):
        public.fit(X, y)


def test_incremental_on_a_local_cluster_equals_the_sequential_stream():
    dd = pytest.importorskip("dask.dataframe")
    wrappers = pytest.importorskip("dask_ml.wrappers")
    distributed = pytest.importorskip("distributed")
    X, y = _frame()
    pipe = make_stream_pipeline(_columns(), _learner())
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        dX = dd.from_pandas(X, npartitions=3)
        dy = dd.from_pandas(pd.Series(y), npartitions=3)
        with client.as_current():
            inc = wrappers.Incremental(pipe, shuffle_blocks=False).fit(dX, dy, classes=[0, 1])
    fitted = inc.estimator_
    assert fitted is not pipe and not hasattr(pipe[-1], "coef_")  # Incremental clones
    sequential = make_stream_pipeline(_columns(), _learner())
    for start, stop in zip(dX.divisions[:-1], [*dX.divisions[1:-1], N]):
        sequential.partial_fit(X.iloc[start:stop], y[start:stop], classes=[0, 1])
    assert fitted[-1].n_samples_seen_ == N
    np.testing.assert_array_equal(fitted[-1].coef_, sequential[-1].coef_)


# ------------------------------------------------------------------ estimator plumbing
def test_clone_get_params_set_params_and_pickle():
    pipe = make_stream_pipeline(_columns(), _learner())
    twin = clone(pipe)
    assert type(twin) is StreamPipeline and twin.get_params().keys() == pipe.get_params().keys()
    twin.set_params(privateonlinelogistic__epsilon=3.0)
    assert twin[-1].epsilon == 3.0 and pipe[-1].epsilon == 1.0
    X, y = _frame()
    pipe.partial_fit(X[:1000], y[:1000], classes=[0, 1])
    resumed = pickle.loads(pickle.dumps(pipe))  # a live stream resumes from its pickle
    resumed.partial_fit(X[1000:], y[1000:])
    pipe.partial_fit(X[1000:], y[1000:])
    np.testing.assert_array_equal(resumed[-1].coef_, pipe[-1].coef_)


def test_sparse_output_reaches_the_final_step_sparse():
    """Hashing's CSR output goes to partial_fit as it is (no densifying in the pipeline)."""
    from scipy import sparse
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.linear_model import SGDClassifier

    rng = np.random.default_rng(0)
    words = rng.choice(["a", "b", "c", "d", "e"], size=(600, 3))
    y = (words[:, 0] == "a").astype(int)
    seen = []

    class Recording(SGDClassifier):
        def partial_fit(self, X, y, classes=None):
            seen.append(sparse.issparse(X))
            return super().partial_fit(X, y, classes=classes)

    hasher = FeatureHasher(n_features=64, input_type="string")
    pipe = make_stream_pipeline(hasher, Recording(random_state=0))
    model = SGDClassifier(random_state=0)
    for start in range(0, 600, 200):
        pipe.partial_fit(words[start:start + 200], y[start:start + 200], classes=[0, 1])
        model.partial_fit(hasher.transform(words[start:start + 200]), y[start:start + 200],
                          classes=[0, 1])
    assert seen == [True] * 3
    np.testing.assert_array_equal(pipe[-1].coef_, model.coef_)


def test_fit_with_metadata_routing():
    X, y = _frame()
    with sklearn.config_context(enable_metadata_routing=True):
        learner = _learner().set_fit_request(classes=True)
        pipe = make_stream_pipeline(_columns(), learner).fit(X, y, classes=[0, 1])
    plain = make_pipeline(_columns(), _learner()).fit(X, y, privateonlinelogistic__classes=[0, 1])
    np.testing.assert_array_equal(pipe[-1].coef_, plain[-1].coef_)
