"""``python -m skdpol ledger show PATH``: a ledger's budget, spend, what remains, and entries.

The figures come from :meth:`PrivacyLedger._report`, the computation
behind :meth:`PrivacyLedger.spent`: the command line and Python state the
same total at the same delta (the budget's, else the largest delta an
entry was calibrated for).
"""

import json
import sqlite3
import sys

from ._ledger import PrivacyLedger
from ._store import EmptyLedger, NotALedgerError, connect


def add_subparser(subparsers):
    """Add ``ledger`` (with ``show``) to the CLI's argparse subparsers."""
    p_ledger = subparsers.add_parser(
        "ledger", help="inspect a privacy ledger",
        description="Inspect a PrivacyLedger file (the privacy spent on one data set).")
    sub = p_ledger.add_subparsers(dest="ledger_command", required=True)
    p_show = sub.add_parser(
        "show", help="print the budget, the spend, what remains and the entries",
        description="Print the budget kept in the ledger at PATH (and its history), the "
                    "total that dp-accounting composes from the charged entries (a stream "
                    "is charged once, at its latest entry), what remains of the budget, and "
                    "every entry with its estimator, parameters and time. Exit status: 0 on "
                    "success, 1 when PATH is missing or not a ledger, 2 on a usage error.")
    p_show.add_argument("path", metavar="PATH", help="the ledger file")
    p_show.add_argument("--delta", type=float, default=None,
                        help="state the total at this delta (default: the budget's delta, "
                             "or without a budget the largest delta any entry was "
                             "calibrated for; the rule of PrivacyLedger.spent())")
    p_show.set_defaults(func=show)
    return p_ledger


def _fmt(value, spec=".4g"):
    return "-" if value is None else format(value, spec)


def _params(params):
    # the ledger's own path is the file being shown
    shown = {k: v for k, v in sorted(params.items()) if k != "ledger"}
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in shown.items()) or "-"


def show(args, out=None, err=None):
    """Print the budget, the total, what remains and the entries; returns the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    if args.delta is not None and not 0 <= args.delta < 1:
        print(f"error: --delta must be in [0, 1), got {args.delta}", file=err)
        return 2
    try:
        ledger = PrivacyLedger(args.path)
        conn = connect(ledger.path, create=False)
    except EmptyLedger:
        print(f"error: {args.path} holds no ledger yet", file=err)
        return 1
    except (FileNotFoundError, NotALedgerError, ValueError, sqlite3.Error) as exc:
        print(f"error: {exc}", file=err)
        return 1
    try:
        entries, total, history = ledger._report(args.delta, conn=conn)
    except (ValueError, sqlite3.Error) as exc:
        print(f"error: {exc}", file=err)
        return 1
    finally:
        conn.close()
    print(f"ledger {args.path}: {len(entries)} entries", file=out)
    if total.budget is None:
        print("budget: none (no release is refused)", file=out)
    else:
        last = history[-1] if history else None
        since = "" if last is None else f" (since {last.time[:19]}, by {last.who}: {last.note})"
        print(f"budget: epsilon={total.budget[0]:.4g} at delta={total.budget[1]:.2g}{since}",
              file=out)
    rule = ("asked" if args.delta is not None else "the budget's" if total.budget is not None
            else "the largest delta of an entry")
    print(f"spent: epsilon={total.epsilon:.4g} at delta={total.delta:.2g} ({rule}; "
          f"{total.accountant}, {total.charged} charged "
          f"{'branch' if total.charged == 1 else 'branches'}; "
          f"sum of their epsilons {total.naive_epsilon:.4g})", file=out)
    if total.remaining is not None:
        print(f"remaining: epsilon={total.remaining:.4g}"
              f"{' (exhausted)' if total.remaining == 0 else ''}", file=out)
    elif total.budget is not None:
        print(f"remaining: - (stated at delta={total.delta:.2g}, not the budget's)", file=out)
    else:
        print("remaining: - (no budget)", file=out)
    if not total.bounds_trusted:
        print("warning: some release read a bound off the data; the total does not cover it",
              file=out)
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
        print(f"{'':>7}params: {_params(e.params)}", file=out)
    if len(history) > 1:
        print("budget changes:", file=out)
        for b in history:
            print(f"  {b.time[:23]}  epsilon={b.epsilon:.4g} delta={b.delta:.2g}  "
                  f"by {b.who}: {b.note}", file=out)
    return 0
