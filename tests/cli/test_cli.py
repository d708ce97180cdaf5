"""The command line as a user meets it: help, exit codes, messages, where files land."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skdpol.__main__ import build_parser, main
from skdpol.reproduce import EXPERIMENTS

ROOT = Path(__file__).resolve().parents[2]
# the checkout's skdpol, whether or not it was pip-installed
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "skdpol", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=600)


def _tree(folder):
    """Every file under folder with its size and modification time."""
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("args", [[], ["demo"], ["reproduce"], ["ledger"], ["ledger", "show"]],
                         ids=["top", "demo", "reproduce", "ledger", "ledger show"])
def test_help_exits_zero_and_describes_the_command(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m skdpol")
    if args == ["reproduce"]:
        assert all(name in out for name in EXPERIMENTS)  # every experiment is listed


def test_every_subcommand_has_help():
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"demo", "reproduce", "ledger"} <= set(subparsers.choices)
    for name, parser in subparsers.choices.items():
        assert parser.format_help().startswith(f"usage: python -m skdpol {name}")


@pytest.mark.parametrize("args, message", [
    ([], "the following arguments are required: COMMAND"),
    (["nonsense"], "invalid choice: 'nonsense'"),
    (["reproduce", "covertype"], "invalid choice: 'covertype'"),
    (["demo", "--epsilon", "-1"], "argument --epsilon: expected a positive number, got '-1'"),
    (["demo", "--epsilon", "nan"], "argument --epsilon: expected a positive number"),
    (["demo", "--delta", "1"], "argument --delta: expected a number in [0, 1), got '1'"),
    (["demo", "--n-samples", "0"], "argument --n-samples: expected a positive integer"),
    (["demo", "--chunk-size", "ten"], "argument --chunk-size: expected a positive integer"),
    (["demo", "--unknown"], "unrecognized arguments: --unknown"),
])
def test_bad_command_lines_exit_2_with_a_message(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage:") and message in err


def test_missing_matplotlib_is_a_clear_error(monkeypatch, tmp_path, capsys):
    # None in sys.modules makes the import fail as if matplotlib were absent
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["reproduce", "kernel-error-decay", "--quick", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "skdpol reproduce: error:" in err and "pip install 'skdpol[reproduce]'" in err
    assert not any(tmp_path.iterdir())  # refused before running, nothing written


def test_demo_runs_all_four_estimators_and_reports_the_spend(tmp_path):
    result = _cli("demo", "--n-samples", "4000", "--chunk-size", "1000", "--random-state", "0",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    for name in ("PrivateOnlineRegressor", "PrivateOnlineLogistic",
                 "KernelPrivateOnlineRegressor", "PrivateSubmodularSelector"):
        row = next(line for line in lines if line.startswith(name))
        spent = float(row.split()[-3])  # "... <epsilon spent> (delta 1e-06)"
        assert 0 < spent <= 1.0 + 1e-9
    assert "PrivacyLeakWarning" not in result.stderr
    assert not any(tmp_path.iterdir())  # the demo writes nothing


def test_demo_epsilon_reaches_every_estimator(capsys):
    assert main(["demo", "--epsilon", "0.5", "--n-samples", "2000", "--chunk-size", "1000",
                 "--random-state", "1", "--no-progress"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith(("PrivateOnline", "KernelPrivate", "PrivateSubmodular"))]
    assert len(rows) == 4
    assert all(0 < float(row.split()[-3]) <= 0.5 + 1e-9 for row in rows)


def test_reproduce_all_quick_writes_png_and_markdown_into_out_only(tmp_path):
    before = _tree(ROOT / "docs"), _tree(ROOT / "skdpol")
    out = tmp_path / "out"
    result = _cli("reproduce", "all", "--quick", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    stems = {EXPERIMENTS[name][0] for name in EXPERIMENTS}
    assert {p.name for p in out.iterdir()} == {f"{s}.{ext}" for s in stems for ext in ("md", "png")}
    for stem in stems:
        assert (out / f"{stem}.png").read_bytes()[:8] == PNG_MAGIC
        page = (out / f"{stem}.md").read_text()
        assert f"]({stem}.png)" in page and "|---|" in page  # the figure and a table
        assert "python -m skdpol reproduce" in page and "--quick" in page
    assert sorted(result.stdout.split()) == sorted(str(p) for p in out.iterdir())
    # nothing written into the checkout: not its docs, not the package
    assert (_tree(ROOT / "docs"), _tree(ROOT / "skdpol")) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_reproduce_default_out_is_a_new_folder_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "kernel-error-decay", "--quick"]) == 0
    assert main(["reproduce", "kernel-error-decay", "--quick"]) == 0  # never overwrites
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "skdpol-kernel-error-decay", "skdpol-kernel-error-decay-2"]
    for folder in tmp_path.iterdir():
        assert sorted(p.name for p in folder.iterdir()) == [
            "kernel_error_decay.md", "kernel_error_decay.png"]
