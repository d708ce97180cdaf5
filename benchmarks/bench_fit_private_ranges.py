"""``python -m skdpol fit`` with private ranges vs every range public, at one total epsilon.

The same path as the command (:func:`skdpol._fit_command.fit_table`) on a
70/30 split of Adult, credit default and King County (kc_house_sales): every
numeric range (and King County's label) ``"private"``, the bounds' share by
the default rule (10%; 30% with the label or 8+ ranges), composed with the
model to exactly ``--epsilon`` (default 1); against the same run with the
schema's public ranges. ``--widen none`` runs the ranges without the normal
widening (the estimator before it). AUC (classification) or R^2 on log
price (regression) on the test part, over seeds; ``docs/benchmarks/private_bounds.md`` reports the table.

    nice python benchmarks/bench_fit_private_ranges.py [--seeds 3] [--epsilon E] [--share S]
        [--tables T ...] [--only COL ...] [--widen none]
"""

import argparse
import json
import tempfile
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import r2_score, roc_auc_score

from skdpol._fit_command import fit_table
from skdpol.datasets import load_table, table_schema
from skdpol.preprocessing import privatise_schema

TABLES = {"adult": False, "credit_default": False, "kc_house_sales": True}


def run(table, seed, private, share, home, only=None, epsilon=1.0):
    data = load_table(table)
    schema = table_schema(table)
    label = schema["label"]["name"]
    frame = data.X.assign(**{label: np.asarray(data.y)})
    order = np.random.default_rng(1000 + seed).permutation(len(frame))
    cut = int(0.7 * len(frame))
    train, test = frame.iloc[order[:cut]], frame.iloc[order[cut:]]
    path = home / f"{table}-{seed}.csv"
    if not path.exists():
        train.to_csv(path, index=False)
    if private:
        for name, spec in schema["columns"].items():
            if spec["type"] == "numeric" and (only is None or name in only):
                spec["range"] = "private"
        if TABLES[table]:
            schema["label"]["range"] = "private"
    out = home / f"{table}-{seed}-{private}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        card = fit_table(path, schema=schema, target=label, epsilon=epsilon, delta=1e-6, out=out,
                         random_state=seed, progress=False, overwrite=True,
                         bounds_share=share if private else None)
    import pickle

    published = pickle.loads((out / "model.pkl").read_bytes())
    if TABLES[table]:
        score = r2_score(np.log(test[label]), np.log(published.predict(test)))
    else:
        proba = published.predict_proba(test)[:, 1]
        y = test[label].astype(str).to_numpy() == str(published.classes_[1])
        score = roc_auc_score(y, proba)
    return score, card


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--share", type=float, default=None)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--widen", default=None, choices=["normal", "none"],
                        help="the private ranges' widening rule (default: the estimator's)")
    parser.add_argument("--tables", nargs="*", default=list(TABLES))
    parser.add_argument("--only", nargs="*", default=None,
                        help="private only these columns (and a regression label)")
    args = parser.parse_args()
    if args.widen is not None:  # the command has no such option: the function's default
        privatise_schema.__kwdefaults__["widen"] = args.widen
    home = Path(tempfile.mkdtemp())
    for table in args.tables:
        rows = []
        for seed in range(args.seeds):
            public, _ = run(table, seed, False, None, home, epsilon=args.epsilon)
            private, card = run(table, seed, True, args.share, home, args.only,
                                epsilon=args.epsilon)
            rows.append((public, private))
            print(json.dumps(dict(table=table, seed=seed, total_epsilon=args.epsilon,
                                  public=round(public, 4),
                                  private=round(private, 4), diff=round(private - public, 4),
                                  epsilon=card["epsilon"],
                                  share=card["bounds_share"].get("share"),
                                  bounds_epsilon=card["bounds_share"]["epsilon"],
                                  model_epsilon=card["bounds_share"].get("model_epsilon"))),
                  flush=True)
        a = np.array(rows)
        print(f"{table}: public {a[:, 0].mean():.4f}, private {a[:, 1].mean():.4f}, "
              f"difference {np.mean(a[:, 1] - a[:, 0]):+.4f} "
              f"(worst {np.min(a[:, 1] - a[:, 0]):+.4f})", flush=True)


if __name__ == "__main__":
    main()
