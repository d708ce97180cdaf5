"""Command line: ``python -m skdpol`` (also installed as the ``skdpol`` script).

Subcommands::

    python -m skdpol demo                       # the four estimators, their scores and cost
    python -m skdpol reproduce olr-regret       # one of the seed papers' experiments
    python -m skdpol reproduce all --quick      # every experiment, seconds each
    python -m skdpol ledger show PATH           # the entries of a privacy ledger
    python -m skdpol fit DATA --target COL --schema S.json --epsilon 1 --out DIR
    python -m skdpol predict DIR DATA --out predictions.csv
    python -m skdpol <subcommand> --help

Each subcommand is one ``_add_<name>(subparsers)`` function below that builds
its parser and sets ``func``; adding one means writing that function and
listing it in ``SUBCOMMANDS``. Exit codes: 0 success, 1 a run that failed
with a clear message (a missing optional dependency, a value the library
refuses), 2 a command line argparse rejects, 130 interrupted.
"""

import argparse
import shlex
import sys
from pathlib import Path


# ------------------------------------------------------------------ argument types
def _checked(convert, accept, what):
    """An argparse ``type``: ``convert`` the text, refuse what ``accept`` does
    not (exit code 2 with "expected <what>")."""
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not accept(value):  # "not" also refuses nan
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value
    return parse


_positive_int = _checked(int, lambda v: v >= 1, "a positive integer")
_positive_float = _checked(float, lambda v: v > 0, "a positive number")
_finite_epsilon = _checked(float, lambda v: 0 < v < float("inf"), "a positive finite number")
_delta = _checked(float, lambda v: 0 <= v < 1, "a number in [0, 1)")


# ------------------------------------------------------------------ demo
def _demo(args):
    from ._demo import run_demo

    run_demo(n_samples=args.n_samples, chunk_size=args.chunk_size, epsilon=args.epsilon,
             delta=args.delta, random_state=args.random_state, progress=not args.no_progress)
    return 0


def _add_demo(subparsers):
    p = subparsers.add_parser(
        "demo", help="stream generated data through the four estimators; print scores and "
                     "the privacy spent",
        description="Stream generated data through PrivateOnlineRegressor, "
                    "PrivateOnlineLogistic, KernelPrivateOnlineRegressor and "
                    "PrivateSubmodularSelector with partial_fit, then print each one's "
                    "held-out score and privacy_spent_. About 15-30 s with the defaults.")
    p.add_argument("--epsilon", type=_positive_float, default=1.0,
                   help="privacy budget of each estimator (default: 1)")
    p.add_argument("--delta", type=_delta, default=1e-6,
                   help="delta of each estimator, well below 1/rows (default: 1e-6)")
    p.add_argument("--n-samples", type=_positive_int, default=100_000,
                   help="rows streamed by the linear models; the kernel model gets 30%% of "
                        "them, the selector 10%% (default: 100000)")
    p.add_argument("--chunk-size", type=_positive_int, default=10_000,
                   help="rows per partial_fit call (default: 10000)")
    p.add_argument("--random-state", type=int, default=None,
                   help="seed the noise for a reproducible run (default: fresh noise, the "
                        "only choice for real releases)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.set_defaults(func=_demo)


# ------------------------------------------------------------------ reproduce
def _new_folder(name):
    """A folder of the working directory that does not exist yet: skdpol-<name>[-k]."""
    base = Path.cwd() / f"skdpol-{name}"
    candidate, k = base, 1
    while candidate.exists():
        k += 1
        candidate = base.with_name(f"{base.name}-{k}")
    return candidate


def _reproduce(args):
    from .reproduce import EXPERIMENTS, run_experiment
    from .reproduce import pyplot

    pyplot()  # fail before a long run, not after it, when matplotlib is missing
    names = list(EXPERIMENTS) if args.experiment == "all" else [args.experiment]
    out = Path(args.out) if args.out is not None else _new_folder(
        "reproduce" if args.experiment == "all" else args.experiment)
    for name in names:
        command = "python -m skdpol reproduce " + " ".join(
            shlex.quote(a) for a in [name, *(["--quick"] if args.quick else []),
                                     "--out", str(args.out if args.out is not None else out)])
        print(f"{name}: running{' (quick)' if args.quick else ''}...", file=sys.stderr)
        for path in run_experiment(name, out, quick=args.quick, command=command):
            print(path)
    return 0


def _add_reproduce(subparsers):
    from .reproduce import EXPERIMENTS, describe

    p = subparsers.add_parser(
        "reproduce", help="run one of the seed papers' experiments (a PNG and a Markdown table)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run an experiment of the seed papers and write its figure (PNG) and "
                    "table (Markdown) into a folder. Needs matplotlib: "
                    "pip install 'skdpol[reproduce]'.\n\nexperiments:\n" + describe()
                    + "\nall: every experiment, one after the other")
    p.add_argument("experiment", choices=["all", *EXPERIMENTS], metavar="EXPERIMENT",
                   help="an experiment name (listed above), or 'all'")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="folder to write into, created if absent (default: a new folder "
                        "./skdpol-<experiment> in the working directory; the committed "
                        "pages live in docs/reproductions)")
    p.add_argument("--quick", action="store_true",
                   help="a seconds-long run of the same pipeline (smoke test, not the figure)")
    p.set_defaults(func=_reproduce)


# ------------------------------------------------------------------ ledger
def _add_ledger(subparsers):
    from .ledger import add_subparser  # ledger show PATH

    add_subparser(subparsers)


# ------------------------------------------------------------------ fit, predict
def _fit(args):
    from ._fit_command import fit_table

    card = fit_table(args.data, schema=args.schema, target=args.target, epsilon=args.epsilon,
                     delta=args.delta, ledger=args.ledger, chunksize=args.chunksize,
                     out=args.out, overwrite=args.overwrite, random_state=args.random_state,
                     progress=not args.no_progress, bounds_share=args.bounds_share)
    print(f"{args.out}: model.pkl, card.json, card.md"
          + (f", {card['figure']}" if card["figure"] else "")
          + f" ({card['rows']} rows, epsilon {card['epsilon']:.4g}, delta {card['delta']:g})")
    return 0


def _add_fit(subparsers):
    p = subparsers.add_parser(
        "fit", help="train a private model on a CSV or Parquet table and write the "
                    "published model and its card",
        description="Train PrivateOnlineLogistic (the schema's label has classes) or "
                    "PrivateOnlineRegressor (it has a range) on a CSV or Parquet table, "
                    "through the public preprocessing of its schema, and write into DIR the "
                    "published model (model.pkl, a skdpol.pipeline.PublishedClassifier or "
                    "PublishedRegressor: the schema and the public pipeline, no curator "
                    "state), its card (card.json, "
                    "card.md) and, with matplotlib, coefficients.png. Every row is checked "
                    "against the schema first: bad input writes nothing.")
    p.add_argument("data", metavar="DATA", help="the table: .csv (also .csv.gz) or .parquet")
    p.add_argument("--target", required=True, metavar="COL",
                   help="the label column (the schema's label)")
    p.add_argument("--schema", required=True, metavar="SCHEMA.json",
                   help="the table's public schema (see skdpol.preprocessing.from_schema)")
    p.add_argument("--epsilon", type=_finite_epsilon, required=True,
                   help="the privacy budget of the release")
    p.add_argument("--delta", type=_delta, default=1e-6,
                   help="well below 1/rows (default: 1e-6)")
    p.add_argument("--ledger", default=None, metavar="PATH",
                   help="record the release in this privacy ledger (created if absent)")
    p.add_argument("--bounds-share", type=float, default=None, metavar="S",
                   help="with ranges \"private\" in the schema: the share of --epsilon "
                        "they get, in (0, 1); default 0.1, or 0.3 when the label's range "
                        "or 8 ranges or more are private. The model gets the rest, "
                        "composed by dp-accounting to exactly --epsilon")
    p.add_argument("--chunksize", type=_positive_int, default=None, metavar="N",
                   help="stream the table N rows at a time through partial_fit (every "
                        "chunk's model is a release; the last round, complete or not, is "
                        "learned at the end of the file, so the model holds every row); "
                        "default: fit on the whole table at once (one release, less noise)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the folder to write (refused if it exists and is not empty)")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty DIR")
    p.add_argument("--random-state", type=int, default=None,
                   help="seed the noise, for tests and documentation only: anyone who knows "
                        "the seed can remove the noise (the card says so)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.set_defaults(func=_fit)


def _predict(args):
    from ._predict_command import predict_table

    rows = predict_table(args.model, args.data, out=args.out, overwrite=args.overwrite,
                         chunksize=args.chunksize, progress=not args.no_progress)
    print(f"{args.out}: {rows} predictions")
    return 0


def _add_predict(subparsers):
    p = subparsers.add_parser(
        "predict", help="apply a model written by fit to a table and write its predictions "
                        "as CSV",
        description="Load DIR/model.pkl (written by python -m skdpol fit; a pickle runs code "
                    "when loaded, so only open models you trust) and write one prediction per "
                    "row of DATA (and, for a classifier, each class's probability) to a CSV. "
                    "Bad input writes nothing.")
    p.add_argument("model", metavar="DIR", help="a folder written by python -m skdpol fit")
    p.add_argument("data", metavar="DATA",
                   help="the table: .csv (also .csv.gz) or .parquet, with the schema's columns")
    p.add_argument("--out", required=True, metavar="PREDICTIONS.csv",
                   help="the CSV to write (refused if it exists)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.add_argument("--chunksize", type=_positive_int, default=None, metavar="N",
                   help="rows per read (default: 65536)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=_predict)


# ------------------------------------------------------------------ entry point
SUBCOMMANDS = (_add_demo, _add_reproduce, _add_ledger, _add_fit, _add_predict)


def build_parser(prog="python -m skdpol"):
    """The command line's parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Differentially private online learners with the scikit-learn API.")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"skdpol {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv=None):
    """Run the command line; returns the exit code.

    Examples
    --------
    >>> from skdpol.__main__ import main
    >>> main(["demo", "--n-samples", "2000", "--chunk-size", "1000", "--random-state", "0",
    ...       "--no-progress"])  # doctest: +ELLIPSIS
    Four private estimators...
    0
    """
    prog = "python -m skdpol"
    if argv is None and Path(sys.argv[0]).name not in ("__main__.py", "-c", "-m"):
        prog = Path(sys.argv[0]).name  # the installed ``skdpol`` script
    args = build_parser(prog).parse_args(argv)  # exits 2 on a bad command line
    from .exceptions import BudgetExhaustedError
    try:
        return args.func(args)
    except (ImportError, ValueError, FileNotFoundError, PermissionError,
            BudgetExhaustedError) as exc:
        print(f"skdpol {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"skdpol {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
