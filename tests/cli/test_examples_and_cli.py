"""The example scripts run as a user would run them, without a privacy warning."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the checkout's skdpol, whether or not it was pip-installed
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
# run a script as __main__ with PrivacyLeakWarning turned into an error: an
# example a user copies must not leak (no bound read off the data, no label
# set inferred, no delta above 1/n)
STRICT = ("import runpy, sys, warnings, skdpol; "
          "warnings.simplefilter('error', skdpol.PrivacyLeakWarning); "
          "runpy.run_path(sys.argv[1], run_name='__main__')")


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_without_privacy_warnings(script, tmp_path):
    result = subprocess.run([sys.executable, "-c", STRICT, str(script)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, env=ENV)
    assert result.returncode == 0, result.stderr[-2000:]


def test_strict_mode_catches_a_leak(tmp_path):
    # the check above can fail: a script that reads data_norm off the data is refused
    script = tmp_path / "leaky.py"
    script.write_text(
        "import numpy as np\nfrom skdpol import PrivateOnlineRegressor\n"
        "X = np.random.default_rng(0).normal(size=(50, 2)); y = X[:, 0]\n"
        "PrivateOnlineRegressor(y_bound=3.0).fit(X, y)\n")
    result = subprocess.run([sys.executable, "-c", STRICT, str(script)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, env=ENV)
    assert result.returncode != 0 and "PrivacyLeakWarning" in result.stderr


def test_grid_search_example_routes_classes_to_the_pipeline_step():
    text = (ROOT / "examples" / "logistic_grid_search.py").read_text()
    assert "privateonlinelogistic__classes=[0, 1]" in text
    assert "simplefilter" not in text and "catch_warnings" not in text  # nothing silenced
