"""Pipelines on private rows: which steps are public, and how to declare one."""

from ._public_steps import (
    DeclaredPublic,
    StepCheck,
    check_public_pipeline,
    check_public_step,
    declare_public,
)

__all__ = ["DeclaredPublic", "StepCheck", "check_public_pipeline", "check_public_step",
           "declare_public"]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._public_steps import refuse_unless_public  # noqa: E402, F401
_internal = ('refuse_unless_public',)
