"""Splitting a line as ``str.split()`` does, on UTF-8 bytes (inline).

Design note: strict UTF-8 validation (Unicode 15, table 3-7) and the whitespace of
``str.split()`` (``_corpus_file`` design note D); nogil, no state. Token spans go into a
``Spans`` owned by the caller.
"""

from libc.stdint cimport int64_t, uint8_t

from hsw2v._kernels.reader._codes cimport ERR_MEMORY, ERR_UTF8, OK, resize


cdef inline bint ascii_space(uint8_t c) noexcept nogil:
    """Whether the ASCII byte ``c`` is whitespace to ``str.split()``: ``\\t \\n \\v \\f \\r``
    (9-13), the separators ``\\x1c``-``\\x1f`` and space (``chr(c).isspace()``)."""
    return (9 <= c <= 13) or (0x1C <= c <= 0x20)


cdef inline int utf8_length(const uint8_t *p, int64_t n) noexcept nogil:
    """Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0 if invalid
    (Unicode table 3-7: no overlongs, no surrogates, nothing above U+10FFFF)."""
    cdef uint8_t c = p[0]
    cdef uint8_t lo = 0x80, hi = 0xBF
    cdef int k, length
    if 0xC2 <= c <= 0xDF:
        length = 2
    elif 0xE0 <= c <= 0xF4:
        length = 3 if c <= 0xEF else 4
        # the lead bytes whose second byte has a narrower range: no overlongs (E0, F0), no
        # surrogates (ED), nothing above U+10FFFF (F4)
        if c == 0xE0:
            lo = 0xA0
        elif c == 0xED:
            hi = 0x9F
        elif c == 0xF0:
            lo = 0x90
        elif c == 0xF4:
            hi = 0x8F
    else:
        return 0
    if n < length or not (lo <= p[1] <= hi):
        return 0
    for k in range(2, length):
        if not (0x80 <= p[k] <= 0xBF):
            return 0
    return length


cdef inline bint unicode_space(const uint8_t *p, int length) noexcept nogil:
    """Whether the valid multi-byte sequence at p is a character str.split() splits at."""
    if length == 2:
        return p[0] == 0xC2 and (p[1] == 0x85 or p[1] == 0xA0)
    if length != 3:
        return False
    if p[0] == 0xE1:
        return p[1] == 0x9A and p[2] == 0x80
    if p[0] == 0xE2:
        if p[1] == 0x80:
            return p[2] <= 0x8A or p[2] == 0xA8 or p[2] == 0xA9 or p[2] == 0xAF
        return p[1] == 0x81 and p[2] == 0x9F
    if p[0] == 0xE3:
        return p[1] == 0x80 and p[2] == 0x80
    return False


cdef struct Spans:
    int64_t *start    # token k is line[start[k]:start[k] + length[k]]
    int64_t *length
    int64_t n
    int64_t capacity


cdef inline int spans_push(Spans *sp, int64_t start, int64_t length) noexcept nogil:
    cdef int64_t capacity
    if sp.n == sp.capacity:
        capacity = max(2 * sp.capacity, 1024)
        if (resize(<void **>&sp.start, capacity * sizeof(int64_t))
                or resize(<void **>&sp.length, capacity * sizeof(int64_t))):
            return ERR_MEMORY
        sp.capacity = capacity
    sp.start[sp.n] = start
    sp.length[sp.n] = length
    sp.n += 1
    return OK


cdef inline int split_tokens(const uint8_t *line, int64_t n, Spans *sp,
                             int64_t *bad) noexcept nogil:
    """Token spans of one line (without its newline) into ``sp``; on invalid UTF-8 returns
    ERR_UTF8 with the offending offset in ``bad``."""
    cdef int64_t i = 0, token = -1
    cdef int length
    cdef uint8_t c
    cdef bint space
    sp.n = 0
    while i < n:
        c = line[i]
        if c < 0x80:  # one byte
            length = 1
            space = ascii_space(c)
        else:
            length = utf8_length(line + i, n - i)
            if length == 0:
                bad[0] = i
                return ERR_UTF8
            space = unicode_space(line + i, length)
        if space:
            if token >= 0:
                if spans_push(sp, token, i - token):
                    return ERR_MEMORY
                token = -1
        elif token < 0:
            token = i
        i += length
    if token >= 0:
        if spans_push(sp, token, n - token):
            return ERR_MEMORY
    return OK
