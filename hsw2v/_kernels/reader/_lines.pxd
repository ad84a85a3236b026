"""Reading the lines of a byte range with positioned reads (inline).

Design note: which lines a range owns is ``_corpus_file`` design note C. Each ``Reader``
belongs to one call. ``hsw2v_pread`` (``reader/_pread.h``) is pread(2) on POSIX and ReadFile at an
offset on Windows.
"""

from libc.errno cimport EINTR, errno
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport malloc, realloc
from libc.string cimport memchr, memmove

from hsw2v._kernels.reader._codes cimport ERR_IO, ERR_MEMORY, ERR_UTF8, OK
from hsw2v._kernels.reader._utf8_split cimport Spans, split_tokens


cdef extern from "reader/_pread.h" nogil:
    int64_t hsw2v_pread(int fd, void *buf, size_t n, int64_t offset)


cdef enum:
    READ_SIZE = 1 << 20  # bytes read at a time (the buffer grows for longer lines)


cdef struct Reader:
    int fd
    int64_t next_read     # file offset of the next byte to read
    int64_t end           # lines starting at or after this belong to the next range
    uint8_t *buf
    int64_t capacity
    int64_t lo            # unread data is buf[lo:hi]
    int64_t hi
    int64_t buf_offset    # file offset of buf[0]
    bint eof
    bint skip             # still looking for the first line start
    int error             # errno of a failed read
    int64_t line_start    # file offset of the line next_line_tokens gave last


cdef inline int reader_init(Reader *r, int fd, int64_t start, int64_t end) noexcept nogil:
    r.fd = fd
    r.end = end
    r.capacity = READ_SIZE
    r.buf = <uint8_t *>malloc(r.capacity)
    r.lo = 0
    r.hi = 0
    r.eof = False
    r.error = 0
    r.line_start = -1
    # a line starts at ``start`` iff the byte before it is a newline: read from there and
    # skip through the first newline
    r.skip = start > 0
    r.next_read = start - 1 if start > 0 else 0
    r.buf_offset = r.next_read
    return OK if r.buf != NULL else ERR_MEMORY


cdef inline int reader_fill(Reader *r) noexcept nogil:
    """Keep the unread data, read more after it (growing the buffer if it is full)."""
    cdef void *grown
    cdef int64_t got
    if r.lo > 0:
        memmove(r.buf, r.buf + r.lo, r.hi - r.lo)
        r.buf_offset += r.lo
        r.hi -= r.lo
        r.lo = 0
    if r.hi == r.capacity:
        grown = realloc(r.buf, 2 * r.capacity)
        if grown == NULL:
            return ERR_MEMORY
        r.buf = <uint8_t *>grown
        r.capacity *= 2
    while True:
        got = hsw2v_pread(r.fd, r.buf + r.hi, <size_t>(r.capacity - r.hi), r.next_read)
        if got >= 0:
            break
        if errno != EINTR:  # interrupted by a signal: try again
            r.error = errno
            return ERR_IO
    if got == 0:
        r.eof = True
    r.hi += got
    r.next_read += got
    return OK


cdef inline int reader_next(Reader *r, const uint8_t **line, int64_t *length,
                     int64_t *line_offset) noexcept nogil:
    """The next line of the range (without its newline): returns 1, or 0 at the end of the
    range, or an error code."""
    cdef const uint8_t *nl
    cdef int rc
    while r.skip:
        nl = <const uint8_t *>memchr(r.buf + r.lo, b'\n', r.hi - r.lo)
        if nl != NULL:
            r.lo = nl - r.buf + 1
            r.skip = False
        elif r.eof:
            return 0
        else:
            r.lo = r.hi
            rc = reader_fill(r)
            if rc != OK:
                return rc
    while True:
        if r.buf_offset + r.lo >= r.end:
            return 0
        nl = <const uint8_t *>memchr(r.buf + r.lo, b'\n', r.hi - r.lo)
        if nl != NULL:
            line[0] = r.buf + r.lo
            length[0] = nl - (r.buf + r.lo)
            line_offset[0] = r.buf_offset + r.lo
            r.lo += length[0] + 1
            return 1
        if r.eof:
            if r.hi == r.lo:
                return 0
            line[0] = r.buf + r.lo
            length[0] = r.hi - r.lo
            line_offset[0] = r.buf_offset + r.lo
            r.lo = r.hi
            return 1
        rc = reader_fill(r)
        if rc != OK:
            return rc


cdef struct Failure:
    int code
    int64_t offset        # UTF-8: file offset of the bad byte
    int64_t line_offset   # UTF-8: file offset of its line
    int error             # I/O: errno


cdef inline int next_line_tokens(Reader *r, const uint8_t **line, int64_t *length, Spans *sp,
                          Failure *fail) noexcept nogil:
    """The next line of the range and its token spans: returns 1, or 0 at the end of the
    range, or an error code; an invalid UTF-8 byte is located in ``fail`` by file offset."""
    cdef int64_t line_offset
    cdef int rc = reader_next(r, line, length, &line_offset)
    if rc != 1:
        return rc
    r.line_start = line_offset
    rc = split_tokens(line[0], length[0], sp, &fail.offset)
    if rc == ERR_UTF8:
        fail.offset += line_offset
        fail.line_offset = line_offset
    return 1 if rc == OK else rc
