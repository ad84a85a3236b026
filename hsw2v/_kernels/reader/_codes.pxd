"""Result codes of the ``corpus_file`` reader's nogil routines, and its one ``realloc`` helper.

Design note: every nogil routine of the reader (``_utf8_split``, ``_token_table``, ``_lookup``,
``_lines``, ``_range``, ``_replay``) returns ``OK`` or one of these codes;
``_corpus_file.raise_failure`` turns them into Python errors with the GIL.
"""

from libc.stdlib cimport realloc


cdef enum:
    OK = 0
    ERR_MEMORY = -1
    ERR_IO = -2
    ERR_UTF8 = -3


cdef inline int resize(void **p, size_t bytes) noexcept nogil:
    """p[0] := realloc(p[0], bytes); on failure p[0] is kept and ERR_MEMORY returned."""
    cdef void *q = realloc(p[0], bytes)
    if q == NULL:
        return ERR_MEMORY
    p[0] = q
    return OK
