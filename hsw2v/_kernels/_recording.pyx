# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""In-place passes over a token recording (see :class:`hsw2v.vocab.TokenRecording`).

Design note
-----------
A. What runs without the GIL: both functions, whole, once their arguments are checked.
   They exist so that counting and mapping a recorded corpus make no temporary copy of it
   (NumPy's ``bincount`` and fancy indexing would each allocate one ``intp`` array per token,
   twice the recording's size, and the C allocator keeps much of that afterwards).

B. What is shared: nothing; each call owns its arrays for its duration. ``finalize_ids``
   writes ``ids`` in place: the write position never passes the read position, so every id
   is read before it is overwritten.

C. Notation. ``ids``: int32 token ids, provisional (0 .. n_keys-1) before finalize and final
   vocabulary ids after; ``to_final``: int32, provisional id -> final id or -1 (not kept);
   ``lengths``: int64 raw tokens per sentence; ``kept_lengths``: int64 kept tokens per
   sentence (output).
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t

cnp.import_array()


def count_ids(const int32_t[::1] ids, Py_ssize_t n_keys):
    """How often each id in ``0 .. n_keys-1`` occurs in ``ids`` (int64).

    >>> count_ids(np.array([0, 2, 2, 1, 2], np.int32), 4).tolist()
    [1, 1, 3, 0]
    """
    cdef cnp.ndarray[int64_t, ndim=1] counts = np.zeros(n_keys, np.int64)
    cdef int64_t[::1] tally = counts
    cdef Py_ssize_t i, n = ids.shape[0]
    cdef int32_t bad = 0
    with nogil:
        for i in range(n):
            if ids[i] < 0 or ids[i] >= n_keys:
                bad = 1
                break
            tally[ids[i]] += 1
    if bad:
        raise ValueError(f"id {ids[i]} at position {i} is outside 0..{n_keys - 1}")
    return counts


def finalize_ids(
    int32_t[::1] ids,
    const int32_t[::1] to_final,
    const int64_t[::1] lengths,
    int64_t[::1] kept_lengths,
):
    """Map ``ids`` through ``to_final`` in place, keeping only ids that map to ``>= 0``, packed
    at the front in their order; write each sentence's kept count to ``kept_lengths``; return
    the number of kept tokens.

    >>> ids = np.array([0, 1, 1, 2, 0], np.int32)
    >>> kept = np.zeros(2, np.int64)
    >>> finalize_ids(ids, np.array([1, -1, 0], np.int32), np.array([2, 3], np.int64), kept)
    3
    >>> ids[:3].tolist(), kept.tolist()
    ([1, 0, 1], [1, 2])
    """
    cdef Py_ssize_t n_keys = to_final.shape[0], n_sentences = lengths.shape[0]
    cdef Py_ssize_t s, read = 0, write = 0, n = ids.shape[0], stop, bad = -1
    cdef int64_t total = 0
    cdef int32_t word, final
    if kept_lengths.shape[0] != n_sentences:
        raise ValueError("kept_lengths must have one entry per sentence")
    for s in range(n_sentences):
        if lengths[s] < 0:
            raise ValueError(f"sentence {s} has a negative length")
        total += lengths[s]
    if total != n:
        raise ValueError(f"the sentence lengths add up to {total}, the recording has {n} ids")
    with nogil:
        for s in range(n_sentences):
            stop = read + lengths[s]
            kept_lengths[s] = 0
            while read < stop:
                word = ids[read]
                if word < 0 or word >= n_keys:
                    bad = read
                    break
                read += 1
                final = to_final[word]
                if final >= 0:
                    ids[write] = final
                    write += 1
                    kept_lengths[s] += 1
            if bad >= 0:
                break
    if bad >= 0:  # ids before ``write`` are already final: the recording is unusable
        raise ValueError(f"id {ids[bad]} at position {bad} is outside 0..{n_keys - 1}")
    return write
