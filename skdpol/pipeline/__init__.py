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
