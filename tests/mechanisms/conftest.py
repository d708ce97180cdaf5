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


@pytest.fixture
def keep_exact_totals(monkeypatch):
    """BLTs built in the test keep their exact totals (``exact_total``:
    ``_blt._EXACT_TOTAL``, off outside tests and audits)."""
    from skdpol.mechanisms import _blt

    monkeypatch.setattr(_blt, "_EXACT_TOTAL", True)


@pytest.fixture(params=[False, True], ids=["no-total", "exact-total"])
def exact_totals(request, monkeypatch):
    """Both: BLTs without their exact totals (the default) and with them."""
    from skdpol.mechanisms import _blt

    monkeypatch.setattr(_blt, "_EXACT_TOTAL", request.param)
    return request.param
