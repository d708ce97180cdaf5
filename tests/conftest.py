import pytest


def pytest_addoption(parser):
    parser.addoption("--audit-full", action="store_true", default=False,
                     help="run the privacy audits at release size (slower, more power)")


@pytest.fixture
def audit_runs(request):
    """Runs per data set for the privacy audits: CI size, or release size."""
    return 5000 if request.config.getoption("--audit-full") else 1000
