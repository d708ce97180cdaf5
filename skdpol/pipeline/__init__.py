"""Pipelines on private rows: which steps are public, how to declare one, and
a Pipeline that streams chunks through public steps into a private learner,
and the published model of ``python -m skdpol fit`` (a schema and a public pipeline)."""

from ._public_steps import (
    DeclaredPublic,
    StepCheck,
    check_public_pipeline,
    check_public_step,
    declare_public,
)
from ._published import PublishedClassifier, PublishedModel, PublishedRegressor
from ._stream import PublicPipeline, StreamPipeline, make_stream_pipeline

__all__ = ["DeclaredPublic", "PublicPipeline", "PublishedClassifier", "PublishedModel",
           "PublishedRegressor", "StepCheck",
           "StreamPipeline", "check_public_pipeline",
           "check_public_step", "declare_public", "make_stream_pipeline"]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._public_steps import refuse_unless_public  # noqa: E402, F401
_internal = ('refuse_unless_public',)
