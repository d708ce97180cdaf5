"""The example scripts and the command line run as a user would run them."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the checkout's skdpol, whether or not it was pip-installed
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script, tmp_path):
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300, env=ENV)
    assert result.returncode == 0, result.stderr[-2000:]


def test_cli_demo_prints_score_and_privacy_spent():
    result = subprocess.run(
        [sys.executable, "-m", "skdpol", "demo", "--n-samples", "20000", "--chunk-size", "5000",
         "--random-state", "0"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "held-out R^2" in result.stdout and "epsilon spent 1.000" in result.stdout


def test_cli_rejects_unknown_commands():
    result = subprocess.run([sys.executable, "-m", "skdpol", "nonsense"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "invalid choice" in result.stderr
