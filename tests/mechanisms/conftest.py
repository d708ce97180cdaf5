"""Fixtures shared by the mechanisms' tests."""

import pytest

from skdpol.mechanisms import _exact


@pytest.fixture
def hooks(monkeypatch):
    """Set _exact's test hooks (plans rebuilt), undone after the test."""
    def set_hooks(**values):
        for name, value in values.items():
            monkeypatch.setattr(_exact, name, value)
        _exact.clear_plans()
    yield set_hooks
    monkeypatch.undo()
    _exact.clear_plans()
