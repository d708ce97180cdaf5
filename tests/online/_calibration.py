"""The discrete sampler's calibration pin shared by the stream tests
(imported by test_momentum and test_ftrl_huber)."""

import pytest
from dp_accounting import ZCDpEvent
from dp_accounting.rdp import RdpAccountant

from skdpol.accounting import epsilon_spent


def assert_zcdp_pinned(event, epsilon, delta):
    """``event`` is zCDP, and dp-accounting's RDP accountant on its rho gives
    ``epsilon`` at ``delta``, as skdpol's own conversion does."""
    assert isinstance(event, ZCDpEvent)
    rdp = RdpAccountant()
    rdp.compose(ZCDpEvent(event.rho))
    assert rdp.get_epsilon(delta) == pytest.approx(epsilon, rel=1e-3)
    assert epsilon_spent(event, delta)[0] == pytest.approx(epsilon, rel=1e-6)
