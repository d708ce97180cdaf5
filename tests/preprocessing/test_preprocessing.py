"""skdpol.preprocessing: calibration, an audit with power, bounds, bad input."""

import math
import warnings

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdpol import PrivacyLeakWarning, PrivacyLedger
from skdpol.accounting._spent import _RDP_ORDERS
from skdpol.audit import epsilon_lower_bound
from skdpol.preprocessing import PrivateStandardScaler, PublicRangeScaler, row_norm_bound
from skdpol.mechanisms import NoiseSpec

DELTA = 1e-5


def _rows(n=2000, d=3, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 3.0, size=(n, d))


@pytest.mark.parametrize("delta, sampler", [(DELTA, "discrete"), (DELTA, "float"), (0.0, "float")])
def test_calibration_is_pinned_against_dp_accounting(delta, sampler, monkeypatch):
    seen = {}
    real = NoiseSpec.perturb

    def spy(spec, value, sensitivity, rng, pool=None):
        seen.update(spec=spec, sensitivity=sensitivity)
        return real(spec, value, sensitivity, rng, pool)

    monkeypatch.setattr(NoiseSpec, "perturb", spy)
    d = 3
    scaler = PrivateStandardScaler(epsilon=0.7, bounds=(-1.0, 3.0), delta=delta,
                                   noise_sampler=sampler, random_state=0).fit(_rows(d=d))
    m = seen["spec"].multiplier
    assert seen["spec"].sampler == sampler
    assert seen["sensitivity"] == pytest.approx(2 * math.sqrt(d))
    if delta == 0:  # L2-Laplace: epsilon = 1 / m
        assert seen["spec"].family == "laplace" and 1 / m == pytest.approx(0.7, rel=1e-6)
    elif sampler == "float":  # a Gaussian of multiplier m, by dp-accounting
        import dp_accounting
        assert dp_accounting.get_epsilon_gaussian(m, delta) == pytest.approx(0.7, rel=1e-6)
    else:  # discrete Gaussian: (1 / (2 m^2))-zCDP, converted by dp-accounting's RDP
        accountant = RdpAccountant(orders=_RDP_ORDERS)
        accountant.compose(dp_event.ZCDpEvent(rho=0.5 / m**2))
        assert accountant.get_epsilon(delta) == pytest.approx(0.7, rel=1e-6)
    assert scaler.privacy_spent_.epsilon == pytest.approx(0.7, rel=1e-6)


def test_the_worst_neighbour_moves_the_sums_by_the_stated_sensitivity():
    # the derivation's maximiser: one value moved from lo to hi; no pair does more
    grid = np.linspace(-1, 1, 401)
    z, z2 = np.meshgrid(grid, grid)
    moves = (z2 - z) ** 2 + (z2**2 - z**2) ** 2  # squared move of (sum z, sum z^2), one column
    assert moves.max() == pytest.approx(4.0) and moves.max() <= 4.0
    assert moves[-1, 0] == pytest.approx(4.0)  # at z = -1, z' = 1


def _release(cut, n_runs, seed):
    """mean_[0] of scalers fitted on D (canary at lo) and D' (canary at hi)."""
    base = np.zeros((20, 1))
    out = []
    for canary in (-1.0, 1.0):
        X = base.copy()
        X[0, 0] = canary
        stats = []
        for run in range(n_runs):
            scaler = PrivateStandardScaler(epsilon=1.0, bounds=(-1.0, 1.0),
                                           random_state=seed * 10**6 + (canary > 0) * 10**5 + run)
            stats.append(scaler.fit(X).mean_[0])
        out.append(np.array(stats))
    return out


def test_audit_holds_at_the_claim_and_catches_a_noise_cut(weakened_noise):
    n = 1200
    d, d_prime = _release(1.0, n, 0)
    eps, _ = epsilon_lower_bound(d, d_prime, DELTA, confidence=0.99)
    assert eps <= 1.0
    with weakened_noise(0.1):  # a tenfold noise cut, the same claim
        d, d_prime = _release(10.0, n, 1)
    eps_cut, _ = epsilon_lower_bound(d, d_prime, DELTA)
    assert eps_cut > 1.5


def test_noise_free_limit_is_the_standard_scaler_on_clipped_values():
    X = _rows()
    scaler = PrivateStandardScaler(epsilon=np.inf, bounds=(-1.0, 3.0), min_scale=1e-6).fit(X)
    reference = StandardScaler().fit(X)
    assert np.allclose(scaler.mean_, reference.mean_) and np.allclose(scaler.var_, reference.var_)
    assert np.allclose(scaler.transform(X), reference.transform(X))
    assert np.allclose(scaler.inverse_transform(scaler.transform(X)), X)


def test_a_non_positive_noisy_variance_releases_the_floor():
    X = np.full((5, 2), 0.5)  # variance 0: the noise makes it <= 0 about half the time
    floors = []
    for seed in range(20):
        scaler = PrivateStandardScaler(epsilon=1.0, bounds=(0.0, 1.0), min_scale=0.1,
                                       random_state=seed).fit(X)
        assert np.all(scaler.var_ >= 0) and np.all(scaler.scale_ >= 0.1)
        assert np.all((scaler.mean_ >= 0) & (scaler.mean_ <= 1))
        floors.append(np.any(scaler.var_ == 0))
        Z = scaler.transform(np.array([[-50.0, 50.0], [0.3, 0.7]]))
        assert np.all(np.linalg.norm(Z, axis=1) <= row_norm_bound(scaler) + 1e-12)
    assert any(floors)


def test_row_norm_bound_from_parameters():
    assert row_norm_bound(PublicRangeScaler(bounds=([0, 0, 0], [1, 2, 3]))) == pytest.approx(
        math.sqrt(3))
    assert row_norm_bound(PrivateStandardScaler(bounds=(0, 1), min_scale=0.25),
                          n_features=4) == pytest.approx(8.0)
    pre = ColumnTransformer([
        ("num", make_pipeline(PrivateStandardScaler(bounds=(0, 1), min_scale=0.5)), [0, 1]),
        ("cat", OneHotEncoder(categories=[["a", "b"], ["x", "y", "z"]],
                              handle_unknown="ignore"), [2, 3]),
    ])
    assert row_norm_bound(pre) == pytest.approx(math.sqrt(2 * 4 + 2))
    with pytest.raises(ValueError, match="categories"):
        row_norm_bound(OneHotEncoder())
    with pytest.raises(ValueError, match="StandardScaler"):
        row_norm_bound(StandardScaler())
    with pytest.raises(ValueError, match="n_features"):
        row_norm_bound(PublicRangeScaler(bounds=(0, 1)))


def test_public_range_scaler_reads_no_statistic():
    a, b = _rows(seed=1), _rows(seed=2)
    scaler = PublicRangeScaler(bounds=(-1.0, 3.0))
    assert np.array_equal(scaler.fit(a).transform(b), scaler.fit(b).transform(b))
    assert scaler.transform(b).min() >= -1 and scaler.transform(b).max() <= 1


@pytest.mark.parametrize("bounds, match", [
    ((1.0, 0.0), "lo < hi"), ((0.0, np.inf), "finite"), ((0, 1, 2), "bounds must be"),
    (([0, 0], [1, 1]), "bounds must be"),
])
def test_bad_bounds_leave_the_scaler_as_it_was(bounds, match):
    X = _rows()
    scaler = PrivateStandardScaler(bounds=(-1.0, 3.0), random_state=0).fit(X)
    before = scaler.mean_.copy()
    scaler.set_params(bounds=bounds)
    with pytest.raises(ValueError, match=match):
        scaler.fit(X)
    assert np.array_equal(scaler.mean_, before) and scaler.bounds_[0][0] == -1.0


def test_bounds_read_off_the_data_warn_and_say_so(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        scaler = PrivateStandardScaler(ledger=path).fit(_rows())
    assert not scaler.privacy_spent_.bounds_trusted
    assert PrivacyLedger(path).entries()[0].inferred == ("bounds",)
    assert not hasattr(scaler, "_rng")  # no curator state after the release


def test_bad_parameters_name_themselves():
    from sklearn.utils._param_validation import InvalidParameterError

    for params, name in [({"epsilon": 0.0}, "epsilon"), ({"min_scale": 0.0}, "min_scale"),
                         ({"delta": 1.0}, "delta"), ({"ledger": 3}, "ledger")]:
        with pytest.raises(InvalidParameterError, match=name):
            PrivateStandardScaler(bounds=(0, 1), **params).fit(_rows())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="NaN"):
            PrivateStandardScaler(bounds=(0, 1)).fit(np.array([[np.nan, 1.0]]))
