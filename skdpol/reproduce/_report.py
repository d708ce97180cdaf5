"""What every reproduction shares: its output folder, Markdown tables, the lazy pyplot.

The reproductions write files; the estimators never import this module, so
matplotlib stays an optional dependency (the ``reproduce`` extra).
"""

import math
import platform
from pathlib import Path

import numpy as np

INSTALL_HINT = "pip install 'skdpol[reproduce]'  (or: pip install matplotlib)"


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend, or a clear ImportError.

    Returns
    -------
    plt : module

    Raises
    ------
    ImportError
        When matplotlib is not installed, naming the extra that installs it.
    """
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(
            f"The reproductions draw their figures with matplotlib, which is not installed: "
            f"{INSTALL_HINT}") from exc
    matplotlib.use("Agg")  # files only: never open a window, work without a display
    import matplotlib.pyplot as plt

    return plt


def output_folder(out):
    """Create ``out`` (and its parents) and return it as a Path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def fmt(value):
    """A table cell: strings as given, floats to 3 significant digits, inf as 'inf'."""
    if isinstance(value, str):
        return value
    if isinstance(value, (float, np.floating)):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            return "-"
        return f"{value:.3g}"
    return str(value)


def markdown_table(header, rows):
    """A Markdown table from a header and rows of cells (formatted with :func:`fmt`).

    Examples
    --------
    >>> print(markdown_table(["epsilon", "regret"], [[1.0, 0.012345], [float("inf"), 0.001]]))
    | epsilon | regret |
    |---|---|
    | 1 | 0.0123 |
    | inf | 0.001 |
    """
    lines = ["| " + " | ".join(str(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(command, runtime):
    """One paragraph: the command that wrote the page, its run time and the software."""
    import sklearn

    from .. import __version__

    return (f"Written by `{command}` in {runtime:.0f} s (python {platform.python_version()}, "
            f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
            f"skdpol {__version__}).")
