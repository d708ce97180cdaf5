"""Where the parties run: in this process, or as tasks on a Dask cluster.

Both runners expose the same calls; the coordinator (``_sgd``) never sees a
block, only what these calls return (the parties' messages).
"""

import pickle

import numpy as np

from . import _party


class LocalParties:
    """Every party's block in this process (numpy input, or Dask without a client)."""

    def __init__(self, blocks):
        self.blocks = blocks  # list of (X_i, y_i)
        self.sizes = [int(np.shape(X)[0]) for X, _ in blocks]

    def summaries(self, **want):
        return [_party.block_summary(X, y, **want) for X, y in self.blocks]

    def sgd2(self, W, terms, keys, mask_keys):
        return [_party.sgd2_message(X, y, W, terms, keys[i], mask_keys[i], i)
                for i, (X, y) in enumerate(self.blocks)]

    def sgd1(self, party, row, W, n_rows, terms, key):
        X, y = self.blocks[party]
        return _party.sgd1_message(X, y, row, W, n_rows, terms, key)

    def close(self):
        pass


class DaskParties:
    """Each party is one row block of a Dask collection, materialised on a
    worker of ``client`` and kept there; every call is a task on that block
    (``pure=False``: two calls never share a result, hence never their noise)."""

    def __init__(self, client, x_parts, y_parts):
        self.client = client
        self.x = client.compute(x_parts)  # futures: the blocks stay on the workers
        self.y = client.compute(y_parts)
        self.sizes = None
        self._terms = self._terms_future = None

    def _scattered(self, terms):
        # the public terms go to every worker once, not with every round
        if terms is not self._terms:
            self._terms, self._terms_future = terms, self.client.scatter(terms, broadcast=True)
        return self._terms_future

    def summaries(self, **want):
        futures = [self.client.submit(_party.block_summary, x, y, pure=False, **want)
                   for x, y in zip(self.x, self.y)]
        out = self.client.gather(futures)
        self.sizes = [s["n_rows"] for s in out]
        return out

    def sgd2(self, W, terms, keys, mask_keys):
        terms = self._scattered(terms)
        futures = [self.client.submit(_party.sgd2_message, x, y, W, terms, keys[i],
                                      mask_keys[i], i, pure=False)
                   for i, (x, y) in enumerate(zip(self.x, self.y))]
        return self.client.gather(futures)

    def sgd1(self, party, row, W, n_rows, terms, key):
        future = self.client.submit(_party.sgd1_message, self.x[party], self.y[party], row, W,
                                    n_rows, self._scattered(terms), key, pure=False)
        return future.result()

    def close(self):
        self.client.cancel(self.x + self.y + ([self._terms_future] if self._terms_future else []))


def payload_bytes(obj):
    """Bytes of ``obj`` as pickled for the wire (what Dask sends, up to framing)."""
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
