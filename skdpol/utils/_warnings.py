"""Warnings that point at the user's line.

The estimators warn from a varying depth (public method, scikit-learn's
``_fit_context`` wrapper, the all-or-nothing transaction, the algorithm
shells), so a fixed ``stacklevel`` lands inside skdpol or scikit-learn.
:func:`user_stacklevel` counts the frames up to the first one outside both
packages (the pattern of pandas' ``find_stack_level``).
"""

import inspect
import os

import sklearn

# the skdpol package folder (this file is skdpol/utils/_warnings.py) and scikit-learn's
_INSIDE = tuple(os.path.dirname(os.path.abspath(path)) + os.sep for path in (
    os.path.dirname(os.path.abspath(__file__)),
    sklearn.__file__,
))


def user_stacklevel():
    """The ``stacklevel`` for ``warnings.warn`` that names the first frame
    outside skdpol and scikit-learn (call it as an argument of the warn)."""
    frame, level = inspect.currentframe(), 0
    try:
        while frame is not None and frame.f_code.co_filename.startswith(_INSIDE):
            frame, level = frame.f_back, level + 1
        return max(level, 1)
    finally:
        del frame
