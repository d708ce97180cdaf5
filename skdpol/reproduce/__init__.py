"""The seed papers' experiments, one module each, run by ``python -m skdpol reproduce``.

Each experiment writes a Markdown page and a PNG figure into a folder of
your choice. The figures need matplotlib (``pip install
'skdpol[reproduce]'``); the estimators never import this subpackage, and
importing it loads no experiment until one is run.

=========================  =========================================================
experiment                 what it measures
=========================  =========================================================
``olr-regret``             seed 002 Figure 2(a): average regret of private
                           Follow-the-Leader (PQFTL) on online linear regression
``logistic-generated``     seed 002 Figure 2(c) in spirit: test accuracy of private
                           logistic regression on a *generated* 54-feature stream
``mi-ogd-regret``          seed 000: regret of MI-private OGD, full vs bandit
``submodular-regret``      seed 001: regret of private online submodular
                           minimisation, full vs bandit
``kernel-error-decay``     seed 003: error decay of kernel online regularised
                           least squares against the seed's claimed rate
=========================  =========================================================

Examples
--------
>>> from skdpol.reproduce import EXPERIMENTS
>>> sorted(EXPERIMENTS)[:2]
['kernel-error-decay', 'logistic-generated']
"""

import importlib

__all__ = ["EXPERIMENTS", "describe", "run_experiment"]

# name -> (module, one-line description); modules load only when run
EXPERIMENTS = {
    "olr-regret": ("olr_regret", "seed 002 Fig. 2(a): regret of private online linear "
                                 "regression (T = 100,000, ~5 min)"),
    "logistic-generated": ("logistic_generated", "seed 002 Fig. 2(c) in spirit: accuracy of "
                                                 "private logistic regression on a generated "
                                                 "54-feature stream (~25 min)"),
    "mi-ogd-regret": ("mi_ogd_regret", "seed 000: MI-private OGD regret, full information "
                                       "vs bandit (~2 min)"),
    "submodular-regret": ("submodular_regret", "seed 001: private submodular minimisation "
                                               "regret, full information vs bandit (~5 min)"),
    "kernel-error-decay": ("kernel_error_decay", "seed 003: error decay of kernel online "
                                                 "regularised least squares (~10 s)"),
}


def describe():
    """One line per experiment: its name and what it measures.

    Returns
    -------
    text : str
    """
    width = max(map(len, EXPERIMENTS))
    return "\n".join(f"{name:<{width}}  {text}" for name, (_, text) in EXPERIMENTS.items())


def run_experiment(name, out_dir, *, quick=False, command=None):
    """Run one experiment and write its page and figure into ``out_dir``.

    Parameters
    ----------
    name : str
        A key of :data:`EXPERIMENTS`.
    out_dir : str or path-like
        Created if absent.
    quick : bool, default=False
        A seconds-long run of the same pipeline (a smoke test, not the figure).
    command : str or None, default=None
        The command line named in the written page.

    Returns
    -------
    paths : list of pathlib.Path
        The Markdown page and the PNG figure.
    """
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose one of {sorted(EXPERIMENTS)}.")
    module = importlib.import_module(f"{__name__}.{EXPERIMENTS[name][0]}")
    return module.run(out_dir, quick=quick, command=command)

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._report import pyplot  # noqa: E402, F401
_internal = ('pyplot',)
