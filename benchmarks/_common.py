"""Helpers shared by the benchmark scripts: the machine description and tables."""

import argparse
import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run from a checkout without installing skdpol
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from threadpoolctl import threadpool_info  # noqa: E402

import skdpol  # noqa: E402


def machine_lines():
    """Markdown bullet lines saying when, where and with what a table was measured."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=10,
        ).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"- date: {now}",
        f"- machine: {platform.platform()}; os.cpu_count() = {os.cpu_count()}; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; shared and "
        "noisy, so compare ratios measured in the same run, not seconds",
        f"- python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, skdpol {skdpol.__version__} (git {commit})",
    ]


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def blas_description():
    """The BLAS libraries threadpoolctl finds, with their default thread counts."""
    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not infos:
        return "no BLAS found by threadpoolctl"
    return "; ".join(f"{i.get('internal_api')} {i.get('version')}, "
                     f"{i.get('num_threads')} threads by default" for i in infos)


def command_line(script):
    """The command that produced a table, as the user typed it."""
    return f"python benchmarks/{script}" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")


def parse_report_args(doc):
    """The ``--quick`` / ``--out`` command line the report benchmarks share."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--out", help="where to write the report")
    return parser.parse_args()


def write_report(text, args, name):
    """Print a benchmark's markdown and write it to ``--out`` or docs/benchmarks/``name``
    (a ``--quick`` run writes only where ``--out`` says)."""
    out = args.out or (None if args.quick else REPO / "docs" / "benchmarks" / name)
    if out:
        with open(out, "w") as fh:
            fh.write(text)
    print(text)


def docstring_page(title, doc, table, n_seeds, script):
    """A one-table report: the title, the script's docstring without its first
    line and its command block, the table, the seeds, command and machine."""
    return "\n".join([
        f"# {title}", "", doc.split("\n\n", 1)[1].rsplit("\n\n", 1)[0], "", table, "",
        f"- {n_seeds} seed(s); command: `{command_line(script)}`", *machine_lines(), "",
    ])


def report_parser(doc):
    """The ``--quick`` / ``--out`` parser of :func:`parse_report_args`, returned
    unparsed so a script can add its own options."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--out", help="where to write the report")
    return parser


def median_iqr(values, digits=3):
    """'median [q25, q75]' of the finite values (n/a when there are none)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return "n/a"
    q25, med, q75 = np.percentile(v, [25, 50, 75])

    def fmt(x):
        return f"{x:.{digits}f}" if abs(x) < 1000 else f"{x:.{digits}g}"

    return fmt(med) if v.size == 1 else f"{fmt(med)} [{fmt(q25)}, {fmt(q75)}]"


def progress_log(path=None):
    """A function printing a progress line and appending it to ``path``
    (None: printing only), flushed at once (long runs read as they go)."""
    out = open(path, "a") if path else None

    def log(msg):
        print(msg, flush=True)
        if out:
            out.write(msg + "\n")
            out.flush()

    return log
