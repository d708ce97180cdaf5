"""Command line: ``python -m skdpol demo`` and ``python -m skdpol reproduce {olr,covertype}``."""

import argparse
import sys


def demo(args):
    """Stream a generated data set through the regressor; print score and cost."""
    from skdpol import PrivateOnlineRegressor
    from skdpol.datasets import iter_chunks, make_online_regression

    data = make_online_regression(n_samples=args.n_samples + 10_000, noise=0.1,
                                  random_state=0)
    X, y = data.X[: args.n_samples], data.y[: args.n_samples]
    X_test, y_test = data.X[args.n_samples:], data.y[args.n_samples:]
    est = PrivateOnlineRegressor(
        epsilon=args.epsilon, data_norm=data.data_norm, y_bound=data.y_bound,
        horizon=args.n_samples, random_state=args.random_state,
    )
    print(f"Streaming {args.n_samples} rows, {X.shape[1]} features, in chunks of "
          f"{args.chunk_size} (epsilon={args.epsilon}, delta={est.delta}, "
          f"data_norm={data.data_norm:.2f}, y_bound={data.y_bound:.2f}):")
    for X_chunk, y_chunk in iter_chunks(X, y, args.chunk_size):
        est.partial_fit(X_chunk, y_chunk)
        spent = est.privacy_spent_
        print(f"  rows {est.n_samples_seen_:7d}  held-out R^2 {est.score(X_test, y_test):6.3f}  "
              f"epsilon spent {spent.epsilon:.3f} ({spent.accountant})")
    one_shot = PrivateOnlineRegressor(
        epsilon=args.epsilon, data_norm=data.data_norm, y_bound=data.y_bound,
        random_state=args.random_state,
    ).fit(X, y)
    print(f"fit (one release of the same rows): held-out R^2 "
          f"{one_shot.score(X_test, y_test):.3f}, epsilon spent "
          f"{one_shot.privacy_spent_.epsilon:.3f}")
    print("Publish est.public_model(); the live estimator's pickle holds secret state.")
    return 0


def reproduce(args):
    if args.experiment == "covertype":
        from skdpol._reproduce_covertype import reproduce_covertype

        options = {"n_runs": args.n_runs, "n_samples": args.n_samples}
        table = reproduce_covertype(
            out_dir=args.out_dir, **{k: v for k, v in options.items() if v is not None})
        print(table.set_index("epsilon").T.to_string())  # one column per epsilon
        return 0
    from skdpol._reproduce import reproduce_olr

    if args.experiment != "olr":
        print(f"unknown experiment {args.experiment!r}; available: olr, covertype",
              file=sys.stderr)
        return 2
    if args.n_runs is not None or args.n_samples is not None:
        print("--n-runs and --n-samples only apply to 'covertype'", file=sys.stderr)
        return 2
    table = reproduce_olr(out_dir=args.out_dir)
    print(table.to_string(index=False))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skdpol")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="stream a bundled data set and print the privacy spent")
    p_demo.add_argument("--epsilon", type=float, default=1.0)
    p_demo.add_argument("--n-samples", type=int, default=100_000)
    p_demo.add_argument("--chunk-size", type=int, default=10_000)
    p_demo.add_argument("--random-state", type=int, default=None)
    p_demo.set_defaults(func=demo)
    p_rep = sub.add_parser("reproduce", help="reproduce a seed experiment")
    p_rep.add_argument("experiment", choices=["olr", "covertype"])
    p_rep.add_argument("--out-dir", default="docs")
    p_rep.add_argument("--n-runs", type=int, default=None,
                       help="covertype only: runs to average (default 10)")
    p_rep.add_argument("--n-samples", type=int, default=None,
                       help="covertype only: rows per run, 10%% held out (default 200000)")
    p_rep.set_defaults(func=reproduce)
    from skdpol.ledger._cli import add_subparser as add_ledger  # ledger show

    add_ledger(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
