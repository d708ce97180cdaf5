"""Multi-party private learning (seed 004) and its Dask glue.

:class:`MultiPartyPrivateSGD` runs seed 004's SGD1 / SGD2 over data split
between parties -- numpy rows with ``parties=`` labels, or the row blocks of
a dask array / dataframe -- in this process or, when a
``dask.distributed`` client is active, as tasks on the workers that hold
the blocks. :func:`noise_comparison` gives the noise the tight and the
seed's calibrations need for one budget.
"""

from ._accounting import noise_comparison
from ._sgd import MultiPartyPrivateSGD

__all__ = ["MultiPartyPrivateSGD", "noise_comparison"]
