/* hsw2v_pread: read up to n bytes at a given file offset, so that several threads can read
 * one descriptor at once without sharing a file position (the corpus_file reader,
 * _lines.pxi). POSIX pread(2) where it exists; on Windows, ReadFile on the
 * descriptor's handle with the offset in an OVERLAPPED structure, which Windows documents as
 * a read at that offset for a synchronous handle (it also moves the handle's position, which
 * nothing here reads).
 *
 * Returns the number of bytes read (0 at end of file), or -1 with errno set. At most
 * 2**30 bytes are asked for at once, so the count always fits the return type everywhere.
 */
#ifndef HSW2V_PREAD_H
#define HSW2V_PREAD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define HSW2V_PREAD_MAX ((size_t)1 << 30)

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <io.h>
#include <windows.h>

static inline int64_t hsw2v_pread(int fd, void *buf, size_t n, int64_t offset) {
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    OVERLAPPED ov;
    DWORD got = 0;
    if (h == INVALID_HANDLE_VALUE || offset < 0) {
        errno = EBADF;
        return -1;
    }
    if (n > HSW2V_PREAD_MAX)
        n = HSW2V_PREAD_MAX;
    ZeroMemory(&ov, sizeof(ov));
    ov.Offset = (DWORD)((uint64_t)offset & 0xFFFFFFFFu);
    ov.OffsetHigh = (DWORD)((uint64_t)offset >> 32);
    if (!ReadFile(h, buf, (DWORD)n, &got, &ov)) {
        if (GetLastError() == ERROR_HANDLE_EOF)
            return 0;
        errno = EIO;
        return -1;
    }
    return (int64_t)got;
}

#else
#include <sys/types.h>
#include <unistd.h>

static inline int64_t hsw2v_pread(int fd, void *buf, size_t n, int64_t offset) {
    if (n > HSW2V_PREAD_MAX)
        n = HSW2V_PREAD_MAX;
    return (int64_t)pread(fd, buf, n, (off_t)offset);
}
#endif

#endif /* HSW2V_PREAD_H */
