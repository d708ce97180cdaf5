import pytest


def pytest_addoption(parser):
    parser.addoption("--audit-full", action="store_true", default=False,
                     help="run the privacy audits at release size (slower, more power); "
                          "without an explicit -m it also runs the slow audits")


def pytest_configure(config):
    # the default run deselects the slow audits (addopts: -m "not slow"); a
    # release-size run wants every audit unless -m says otherwise
    if config.getoption("--audit-full") and config.option.markexpr == "not slow":
        config.option.markexpr = ""


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


@pytest.fixture
def weakened_noise():
    """``with weakened_noise(factor): ...`` scales every calibrated noise multiplier
    by ``factor`` inside the block: the audits' deliberately broken releases.

    It patches the package's one calibration, ``NoiseSpec.calibrated``, so every
    estimator and algorithm is weakened the same way while claiming the same
    budget (a release that is not calibrated -- ``noise_calibration="paper"``
    -- is not touched). Blocks nest without compounding.
    """
    import contextlib

    from skdpol.mechanisms import NoiseSpec

    honest = NoiseSpec.__dict__["calibrated"]

    @contextlib.contextmanager
    def weaken(factor):
        def scaled(cls, *args, **kwargs):
            return honest.__func__(cls, *args, **kwargs).scaled(factor)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(NoiseSpec, "calibrated", classmethod(scaled))
            yield

    return weaken
