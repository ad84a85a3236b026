/* Checks hsw2v_pread (hsw2v/_kernels/reader/_pread.h) on the platform this is compiled for: writes a file
 * of known bytes, then reads it back at many offsets and lengths, from the start, the middle,
 * across the end and past it, in an order that never follows the file position. Prints
 * "ok <reads>" or the first mismatch, and exits 0 only when every read is right.
 * Built and run by tests/test_pread.py, natively and (where a cross compiler and an emulator
 * are installed) as a Windows program. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <io.h>
#define OPEN_FLAGS (_O_RDONLY | _O_BINARY)
#define open_file _open
#define close_file _close
#else
#include <unistd.h>
#define OPEN_FLAGS O_RDONLY
#define open_file open
#define close_file close
#endif
#include "reader/_pread.h"

#define SIZE 300007

static unsigned char byte_at(long i) { return (unsigned char)((i * 7919 + (i >> 8)) & 0xFF); }

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "pread_check.bin";
    FILE *f = fopen(path, "wb");
    static unsigned char buf[SIZE + 64];
    long i, reads = 0;
    if (!f) { printf("cannot write %s\n", path); return 2; }
    for (i = 0; i < SIZE; i++) fputc(byte_at(i), f);
    fclose(f);
    int fd = open_file(path, OPEN_FLAGS);
    if (fd < 0) { printf("cannot open %s\n", path); return 2; }
    /* offsets visited backwards and by strides, so the position never predicts the next */
    for (long off = SIZE + 10; off >= 0; off -= 4093) {
        for (long n = 1; n <= 40000; n = n * 3 + 1) {
            long want = off >= SIZE ? 0 : (off + n > SIZE ? SIZE - off : n);
            memset(buf, 0xAB, sizeof(buf));
            int64_t got = hsw2v_pread(fd, buf, (size_t)n, (int64_t)off);
            reads++;
            if (got != want) {
                printf("offset %ld length %ld: got %lld bytes, want %ld\n", off, n, (long long)got, want);
                return 1;
            }
            for (i = 0; i < want; i++)
                if (buf[i] != byte_at(off + i)) {
                    printf("offset %ld length %ld: byte %ld differs\n", off, n, i);
                    return 1;
                }
            if (buf[want] != 0xAB) { printf("offset %ld: wrote past the count\n", off); return 1; }
        }
    }
    if (hsw2v_pread(fd, buf, 1, -1) != -1) { printf("a negative offset was not refused\n"); return 1; }
    close_file(fd);
    printf("ok %ld\n", reads);
    return 0;
}
