"""The model card of ``python -m skdpol fit``: ``card.json``, ``card.md``, ``coefficients.png``.

Everything on the card is public: the privacy spent (``privacy_spent_`` of
the published model), the row count (public under replace-one neighbours),
the schema, where each bound came from, the released coefficients by feature
name and the command's parameters. Nothing is computed from the rows.
"""

import datetime
import json

import numpy as np

from . import __version__

# what the bounds cost: nothing while they all come from the schema
BOUNDS_NOTE = ("every bound came from the schema (public knowledge), so the bounds spent "
               "nothing")


def coefficients(published):
    """The released coefficients by feature name.

    Returns
    -------
    coefficients : dict
        ``{feature: weight}`` for a regressor or a two-class model (a positive
        weight favours the second class of ``classes_``, which are sorted),
        ``{class: {feature: weight}}`` with three classes or more.
    intercept : float or dict
        Likewise.
    """
    names = [str(n) for n in published.feature_names_]
    coef = np.atleast_2d(published.model.coef_)
    intercept = np.atleast_1d(published.model.intercept_)
    if coef.shape[0] == 1:
        return ({n: float(w) for n, w in zip(names, coef[0])}, float(intercept[0]))
    classes = [str(c) for c in published.classes_]
    return ({c: {n: float(w) for n, w in zip(names, row)} for c, row in zip(classes, coef)},
            {c: float(b) for c, b in zip(classes, intercept)})


def _bounds(pre, schema, private=None):
    label = schema["label"]
    estimated = (private or {}).get("ranges", {})

    def source(name, spec):
        if name in estimated:
            return (f"range [{spec['range'][0]:.6g}, {spec['range'][1]:.6g}] by private "
                    f"estimate at epsilon {private['epsilon']:.4g} (the bounds' share, all "
                    f"{len(estimated)} private ranges together)")
        return f"range {spec['range']} from the schema"

    columns = {}
    for name, spec in schema["columns"].items():
        if spec["type"] == "numeric":
            columns[name] = (source(name, spec)
                             + (f", transform {spec['transform']}" if spec.get("transform")
                                else "")
                             + (f", public bins at {spec['bins']}" if spec.get("bins") else ""))
        else:
            columns[name] = f"{len(spec['categories'])} categories from the schema"
    bounds = {"data_norm": {"value": pre.data_norm,
                            "source": "the schema's structure: sqrt(numeric + binned + "
                                      "categorical columns), each contributing at most 1"},
              "columns": columns}
    if pre.y_bound is not None:
        bounds["y_bound"] = {"value": pre.y_bound,
                             "source": f"the label's {source(label['name'], label)}, "
                                       f"transform {label.get('transform', 'none')}: half "
                                       "the transformed range's width"}
    return bounds


def _share(private):
    if private is None:
        return {"epsilon": 0.0, "delta": 0.0, "why": BOUNDS_NOTE}
    return {"epsilon": float(private["epsilon"]), "delta": float(private["delta"]),
            "share": float(private["share"]), "model_epsilon": float(private["model_epsilon"]),
            "why": (f"{len(private['ranges'])} ranges estimated privately "
                    f"({', '.join(private['ranges'])}) at {private['share']:.0%} of epsilon, "
                    f"epsilon {private['epsilon']:.4g} at this delta ({private['accountant']});"
                    f" the model at epsilon {private['model_epsilon']:.4g}; "
                    + private["method"])}


def make_card(published, *, pre, rows, parameters, figure=None, private=None):
    """The model card as a dict (what ``card.json`` holds).

    Parameters
    ----------
    published : skdpol._published.PublishedModel
    pre : skdpol.preprocessing.PublicPreprocessing
        What ``from_schema`` built (the bounds).
    rows : int
        The rows the model was trained on (the card states how many the
        released model learned, ``rows_learned``, and ``rows_waiting``: 0).
    parameters : dict
        The command's parameters.
    figure : str or None
        The coefficients' PNG, relative to the card.
    private : dict or None
        With private ranges: ``share``, ``epsilon`` (the ranges', at
        ``delta``), ``delta``, ``model_epsilon``, ``accountant``, ``ranges``
        (``{column: [lo, hi]}``) and ``method`` (how they were composed).
    """
    spent = published.privacy_spent_
    coef, intercept = coefficients(published)
    schema = published.schema
    classes = schema["label"].get("classes")
    return {
        "model": f"{parameters['estimator']} for {schema['label']['name']!r}",
        "task": "classification" if classes is not None else "regression",
        "epsilon": float(spent.epsilon),
        "delta": float(spent.delta),
        "accountant": spent.accountant,
        "releases": int(spent.releases),
        "seeded": bool(spent.seeded),
        "bounds_trusted": bool(spent.bounds_trusted),
        "bounds_share": _share(private),
        "bounds": _bounds(pre, schema, private),
        "rows": int(rows),
        # every row in the released model: fit uses them all; a stream learns
        # its incomplete last round at the end (the horizon's call, or flush())
        "rows_learned": int(published.n_samples_learned_),
        "rows_waiting": int(rows) - int(published.n_samples_learned_),
        "label": schema["label"],
        "features": [str(n) for n in published.feature_names_],
        "coefficients": coef,
        "intercept": intercept,
        # two classes: one weight vector, for the second of the sorted classes
        "positive_class": (str(published.classes_[1]) if classes is not None
                           and len(classes) == 2 else None),
        "units": ("The coefficients weigh the preprocessed features (numeric columns mapped "
                  "to [-1, 1], bins and categories as 0/1 indicators)"
                  + ("" if classes is not None else "; the label is clipped to its range, "
                     "transformed and centred on the middle of the transformed range")),
        "figure": figure,
        "parameters": parameters,
        "schema": schema,
        "skdpol": __version__,
        "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def plot_coefficients(card, path):
    """Draw the card's coefficients as horizontal bars into ``path`` (PNG).

    Returns False, drawing nothing, when matplotlib is not installed (an
    optional dependency).
    """
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")  # files only: no window, no display needed
    import matplotlib.pyplot as plt

    coef = card["coefficients"]
    panels = coef if isinstance(next(iter(coef.values())), dict) else {"": coef}
    names = card["features"]
    fig, axes = plt.subplots(1, len(panels), sharey=True, squeeze=False,
                             figsize=(3.5 + 2.5 * len(panels), 1.0 + 0.22 * len(names)))
    for ax, (title, weights) in zip(axes[0], panels.items()):
        ax.barh(range(len(names)), [weights[n] for n in names], color="tab:blue")
        ax.axvline(0.0, color="black", linewidth=0.6)
        if title:
            ax.set_title(f"class {title}", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_yticks(range(len(names)), names, fontsize=7)
    axes[0][0].set_ylim(len(names) - 0.5, -0.5)  # the first feature on top
    fig.suptitle(f"{card['model']}: epsilon {card['epsilon']:.4g}, delta "
                 f"{card['delta']:g}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def render_markdown(card):
    """The card for humans (``card.md``): the same figures as ``card.json``."""
    label = card["label"]
    lines = [f"# Model card: {card['model']}", ""]
    if card["seeded"]:
        lines += ["**Seeded noise** (`--random-state`): anyone who knows the seed can "
                  "regenerate and subtract the noise. For tests and documentation only; not "
                  "a private release.", ""]
    lines += [
        "## Privacy", "",
        "| | |", "|---|---|",
        f"| epsilon | {card['epsilon']:.4g} |",
        f"| delta | {card['delta']:g} |",
        f"| accountant | {card['accountant']} |",
        f"| releases | {card['releases']} |",
        f"| of which the bounds | epsilon {card['bounds_share']['epsilon']:g}, delta "
        f"{card['bounds_share']['delta']:g}: {card['bounds_share']['why']} |",
        "", "One row of the table is one person: the guarantee covers replacing any one row.",
        "",
        "## Data", "",
        f"- rows: {card['rows']:,}, of which the released model learned "
        f"{card['rows_learned']:,}"
        + (" (all: none left waiting for a round)" if card["rows_waiting"] == 0
           else f" ({card['rows_waiting']:,} waiting for a round)"),
        f"- label: `{label['name']}`, "
        + (f"classes {label['classes']}" if "classes" in label
           else f"range {label['range']} (transform {label.get('transform', 'none')})"),
        f"- features: {len(card['schema']['columns'])} columns, "
        f"{len(card['features'])} after the public preprocessing",
        "",
        "## Bounds and where they came from", "",
        f"- data_norm = {card['bounds']['data_norm']['value']:.4g}: "
        f"{card['bounds']['data_norm']['source']}",
    ]
    if "y_bound" in card["bounds"]:
        lines.append(f"- y_bound = {card['bounds']['y_bound']['value']:.4g}: "
                     f"{card['bounds']['y_bound']['source']}")
    lines += ["", "| column | bound |", "|---|---|"]
    lines += [f"| `{name}` | {source} |" for name, source in card["bounds"]["columns"].items()]
    lines += ["", "## Coefficients", "", card["units"] + ".", ""]
    if card["figure"]:
        lines += [f"![coefficients]({card['figure']})", ""]
    coef, intercept = card["coefficients"], card["intercept"]
    if isinstance(intercept, dict):
        classes = list(intercept)
        lines += ["| feature | " + " | ".join(f"class {c}" for c in classes) + " |",
                  "|---|" + "---:|" * len(classes),
                  "| (intercept) | " + " | ".join(f"{intercept[c]:.4g}" for c in classes) + " |"]
        lines += [f"| `{n}` | " + " | ".join(f"{coef[c][n]:.4g}" for c in classes) + " |"
                  for n in card["features"]]
    else:
        if card["positive_class"] is not None:
            lines += [f"A positive weight favours `{card['positive_class']}`.", ""]
        lines += ["| feature | weight |", "|---|---:|", f"| (intercept) | {intercept:.4g} |"]
        lines += [f"| `{n}` | {coef[n]:.4g} |" for n in card["features"]]
    params = card["parameters"]
    lines += ["", "## How it was made", "",
              f"`python -m skdpol fit` (skdpol {card['skdpol']}) at {card['time']}: "
              f"{params['estimator']} (algorithm {params['algorithm']}), "
              + ("`fit` on the whole table (one release)" if params["chunksize"] is None
                 else f"`partial_fit` on chunks of {params['chunksize']:,} rows "
                      f"(horizon {card['rows']:,}; every chunk's model is a release, and "
                      "the call that reached the horizon learned the last round, complete "
                      "or not: its release is in the epsilon and the releases above)")
              + ".", "",
              "| parameter | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in params.items()]
    lines += ["", "The full schema is in `card.json`.", ""]
    return "\n".join(lines)


def write_card(folder, published, *, pre, rows, parameters, private=None):
    """Write ``card.json``, ``card.md`` and (with matplotlib) ``coefficients.png`` into ``folder``.

    Returns
    -------
    card : dict
        What ``card.json`` holds.
    """
    card = make_card(published, pre=pre, rows=rows, parameters=parameters, private=private)
    if plot_coefficients(card, folder / "coefficients.png"):
        card["figure"] = "coefficients.png"
    (folder / "card.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    (folder / "card.md").write_text(render_markdown(card), encoding="utf-8")
    return card
