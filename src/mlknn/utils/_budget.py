"""The one working-memory budget of mlknn's own blocked passes.

A pass that cannot hold all of its temporaries at once (the label counts gathered
from neighbour lists, DML-kNN's evidence blocks, the batched logistic regressions'
label batches, CML's potentials, the exact search's key chunks, the stream updates'
key chunks) works through blocks of rows or labels. Each block size is a multiple of
:data:`WORK_BYTES`, set here and nowhere else, so that the footprint of every pass
is read, and changed, in one place; the multiples say which passes hold several
blocks' worth of arrays at once.

Two limits are not budgets and stay with their code: scikit-learn's
``working_memory`` (``sklearn.config_context``), which the searches read for their
chunks of queries, and cache-sized blocks (mutual proximity's empiric chunks),
whose size is set by the cache, not by memory. ``mlknn.config_context(max_memory=...)``
is a guard that refuses a fit before it starts, not a block size.
"""

#: Bytes of one block of work: every blocked pass's temporaries are a small multiple.
WORK_BYTES = 16 * 2**20
