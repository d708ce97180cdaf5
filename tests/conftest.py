import pytest


def pytest_addoption(parser):
    parser.addoption("--audit-full", action="store_true", default=False,
                     help="run the privacy audits at release size (slower, more power)")


@pytest.fixture
def audit_runs(request):
    """Runs per data set for the privacy audits: CI size, or release size."""
    return 5000 if request.config.getoption("--audit-full") else 1000


@pytest.fixture
def mechanism_only(monkeypatch):
    """Audit the mechanism, not its post-processing: PQFTL's shrinkage towards
    zero (free, see ``skdpol.online._ftl.shrink_ridge``) would zero most
    releases of an audit's tiny data set and hide the canary."""
    monkeypatch.setattr("skdpol.online._ftl.SHRINK_TAIL", -float("inf"))
    monkeypatch.setattr("skdpol.online._ftl.SHRINK_MARGIN", 0.0)
