"""What ``python -m skdpol fit`` publishes: a table's schema and a public pipeline.

:class:`PublishedClassifier` and :class:`PublishedRegressor` hold the table's
schema (public by definition) and a :class:`~skdpol.pipeline.PublicPipeline`
(:meth:`StreamPipeline.public_model`): the preprocessing fitted from the
schema (which read nothing from the rows but their column names) and the
estimator's ``public_model()``, the released coefficients and
``privacy_spent_``. No partial sums, iterate, random state or row: their
pickle is the model one may publish. What they add to the public pipeline is
the schema's check of every input table (the column and row that break it
are named) and, for a regressor, predictions in the label's units.

The classes live in this private module but are pickled under their public
name, ``skdpol.pipeline.PublishedClassifier`` (``__module__`` below), so a
``model.pkl`` does not depend on where the code sits. Pickles written before
(as ``skdpol._published.PublishedClassifier``, with ``preprocessor`` and
``model`` attributes) still load: ``skdpol._published`` keeps the names and
:meth:`PublishedModel.__setstate__` rebuilds their pipeline.
"""

import numpy as np
import pandas as pd

from ..preprocessing import from_schema
from ._stream import PublicPipeline

PUBLIC_MODULE = "skdpol.pipeline"


class PublishedModel:
    """A published model: a table's schema and the public pipeline fitted on it.

    Built by ``python -m skdpol fit`` (:func:`skdpol._fit_command.fit_table`)
    and pickled as ``model.pkl``. Its pickle holds the schema, the
    preprocessing fitted from it (category lists and public ranges, nothing
    read from the rows) and the estimator's ``public_model()``, so it may be
    published. Every table given to it is checked against the schema first.

    Parameters
    ----------
    schema : dict
        The table's public schema (as :func:`skdpol.preprocessing.read_schema` reads it).
    pipeline : PublicPipeline
        The public preprocessing and the released model
        (:meth:`StreamPipeline.public_model`).

    Attributes
    ----------
    pipeline : PublicPipeline
    preprocessor : sklearn.compose.ColumnTransformer
        The fitted public preprocessing (``pipeline[0]``).
    model : object
        The estimator's ``public_model()``, on the preprocessed features
        (``pipeline[-1]``).
    feature_names_in_ : ndarray of str
        The schema's feature columns (the input).
    feature_names_ : ndarray of str
        The preprocessed features the coefficients weigh.
    privacy_spent_ : skdpol.accounting.PrivacySpent
        What publishing the model cost (every release, the last round's included).
    n_samples_seen_ : int
        The rows it was trained on (public under replace-one neighbours).
    n_samples_learned_ : int
        The rows the released model has learned: all of them (``fit`` uses
        every row; a stream learns its last, incomplete round at the end).
    """

    def __init__(self, *, schema, pipeline):
        if not isinstance(pipeline, PublicPipeline):
            raise TypeError("pipeline must be a PublicPipeline (StreamPipeline.public_model()),"
                            f" got {type(pipeline).__name__}.")
        self.schema = schema
        self.pipeline = pipeline
        self._describe()

    def _describe(self):
        model = self.model
        self.feature_names_in_ = np.asarray(list(self.schema["columns"]), dtype=object)
        self.feature_names_ = np.asarray(self.preprocessor.get_feature_names_out(),
                                         dtype=object)
        self.privacy_spent_ = model.privacy_spent_
        self.n_samples_seen_ = model.n_samples_seen_
        self.n_samples_learned_ = getattr(model, "n_samples_learned_", model.n_samples_seen_)

    def __setstate__(self, state):
        if "pipeline" not in state:  # a pickle from before the pipeline: its two parts
            state = dict(state)
            state["pipeline"] = PublicPipeline([("columntransformer", state.pop("preprocessor")),
                                                ("model", state.pop("model"))])
            state.setdefault("n_samples_learned_", state.get("n_samples_seen_"))
        self.__dict__.update(state)

    @property
    def preprocessor(self):
        return self.pipeline[0]

    @property
    def model(self):
        return self.pipeline[-1]

    def __repr__(self):
        return (f"{type(self).__name__}(label={self.schema['label']['name']!r}, "
                f"features={len(self.feature_names_in_)}, epsilon="
                f"{self.privacy_spent_.epsilon:.6g}, delta={self.privacy_spent_.delta:g})")

    def features(self, X, first_row=1):
        """The rows of ``X`` checked against the schema and preprocessed.

        Parameters
        ----------
        X : pandas.DataFrame
            Rows with the schema's feature columns.
        first_row : int, default=1
            The number of ``X``'s first row, for the error messages.

        Returns
        -------
        features : pandas.DataFrame
            The preprocessed rows, columns named ``feature_names_``.

        Raises
        ------
        skdpol._published.InputError
            (a ValueError) Naming the column and row that break the schema.
        """
        from .._published import check_table  # the commands' check (imports this module)

        if not isinstance(X, pd.DataFrame):
            raise TypeError("X must be a pandas DataFrame with the schema's columns, got "
                            f"{type(X).__name__}.")
        frame, _ = check_table(X, self.schema, first_row=first_row)
        return pd.DataFrame(np.asarray(self.preprocessor.transform(frame)),
                            columns=self.feature_names_)

    def predict(self, X):
        """Predictions for the rows of ``X`` (a DataFrame with the schema's columns)."""
        return self.predict_features(self.features(X))

    def predict_features(self, features):
        """Predictions for rows already through :meth:`features`."""
        return self.model.predict(self._named(features))

    def _named(self, features):
        # the model knows the feature names when its pipeline gave it a DataFrame
        # (the command does); one fitted on an array gets the array
        return features if hasattr(self.model, "feature_names_in_") else np.asarray(features)


class PublishedClassifier(PublishedModel):
    """A published classifier (see :class:`PublishedModel`); ``classes_`` is the schema's.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skdpol import PrivateOnlineLogistic
    >>> from skdpol.pipeline import PublishedClassifier, make_stream_pipeline
    >>> from skdpol.preprocessing import from_schema
    >>> schema = {"label": {"name": "y", "classes": ["no", "yes"]},
    ...           "columns": {"age": {"type": "numeric", "range": [18, 99]}}}
    >>> pre = from_schema(schema)
    >>> X = pd.DataFrame({"age": np.linspace(18, 99, 2000)})
    >>> y = np.where(X.age > 50, "yes", "no")
    >>> pipe = make_stream_pipeline(pre.preprocessor,
    ...                             PrivateOnlineLogistic(epsilon=1.0, data_norm=pre.data_norm,
    ...                                                   random_state=0))
    >>> pipe = pipe.fit(X, y, classes=pre.classes)
    >>> model = PublishedClassifier(schema=schema, pipeline=pipe.public_model())
    >>> model.predict(pd.DataFrame({"age": [20.0, 90.0]})).tolist()
    ['no', 'yes']
    >>> model.predict(pd.DataFrame({"age": ["old"]}))
    Traceback (most recent call last):
    ...
    skdpol._published.InputError: column 'age': row 1 is not a number.
    """

    def _describe(self):
        super()._describe()
        self.classes_ = self.model.classes_

    def decision_function(self, X):
        """The linear scores of the rows of ``X`` (one column per class, or one for two)."""
        return self.model.decision_function(self._named(self.features(X)))

    def predict_proba(self, X):
        """Class probabilities (columns in the order of ``classes_``)."""
        return self.model.predict_proba(self._named(self.features(X)))


class PublishedRegressor(PublishedModel):
    """A published regressor (see :class:`PublishedModel`): predictions in the label's units."""

    def predict_features(self, features):
        """Predictions in the label's units: the model's output through the label's inverse map."""
        predictions = self.model.predict(self._named(features))
        return from_schema(self.schema).label_inverse(predictions)


# pickled (and documented) under the public name: model.pkl must not name a private module
for _cls in (PublishedModel, PublishedClassifier, PublishedRegressor):
    _cls.__module__ = PUBLIC_MODULE
del _cls
