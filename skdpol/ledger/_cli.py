"""``python -m skdpol ledger show PATH``: the entries of a ledger and their total."""

import sqlite3
import sys

from ._ledger import PrivacyLedger, _entries, _spent
from ._store import EmptyLedger, NotALedgerError, connect, read_rows


def add_subparser(subparsers):
    """Add ``ledger`` (with ``show``) to the CLI's argparse subparsers."""
    p_ledger = subparsers.add_parser(
        "ledger", help="inspect a privacy ledger",
        description="Inspect a PrivacyLedger file (the privacy spent on one data set).")
    sub = p_ledger.add_subparsers(dest="ledger_command", required=True)
    p_show = sub.add_parser(
        "show", help="print the entries and the composed total",
        description="Print every entry of the ledger at PATH and the total that "
                    "dp-accounting composes from the charged ones (a stream is charged "
                    "once, at its latest entry). Exit status: 0 on success, 1 when PATH "
                    "is missing or not a ledger, 2 on a usage error.")
    p_show.add_argument("path", metavar="PATH", help="the ledger file")
    p_show.add_argument("--delta", type=float, default=None,
                        help="state the total at this delta (default: the largest delta "
                             "any entry was calibrated for)")
    p_show.set_defaults(func=show)
    return p_ledger


def _fmt(value, spec=".4g"):
    return "-" if value is None else format(value, spec)


def show(args, out=None, err=None):
    """Print the entries and the total; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    if args.delta is not None and not 0 <= args.delta < 1:
        print(f"error: --delta must be in [0, 1), got {args.delta}", file=err)
        return 2
    try:
        conn = connect(PrivacyLedger(args.path).path, create=False)
    except EmptyLedger:
        print(f"error: {args.path} holds no ledger yet", file=err)
        return 1
    except (FileNotFoundError, NotALedgerError, ValueError, sqlite3.Error) as exc:
        print(f"error: {exc}", file=err)
        return 1
    try:
        rows = read_rows(conn)
    finally:
        conn.close()
    entries = _entries(rows)
    delta = args.delta if args.delta is not None else max((e.delta for e in entries),
                                                         default=0.0)
    print(f"ledger {args.path}: {len(entries)} entries", file=out)
    header = f"{'id':>5}  {'time (UTC)':<23}  {'source':<28} {'epsilon':>8} {'delta':>8} " \
             f"{'releases':>8}  {'branch':<8}  charged"
    print(header, file=out)
    for e in entries:
        note = "yes" if e.charged else "no (superseded)"
        if e.inferred:
            note += f"; read off the data: {', '.join(e.inferred)}"
        if e.seeded:
            note += "; seeded noise"
        print(f"{e.id:>5}  {e.time[:23]:<23}  {e.source[:28]:<28} {_fmt(e.epsilon):>8} "
              f"{e.delta:>8.2g} {e.releases:>8}  {e.branch[:8]:<8}  {note}", file=out)
    total = _spent(entries, delta)
    print(f"total: epsilon={total.epsilon:.4g} at delta={total.delta:.2g} "
          f"({total.accountant}, {total.charged} charged "
          f"{'branch' if total.charged == 1 else 'branches'}; "
          f"sum of their epsilons {total.naive_epsilon:.4g})", file=out)
    if not total.bounds_trusted:
        print("warning: some release read a bound off the data; the total does not cover it",
              file=out)
    return 0
