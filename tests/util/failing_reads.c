/* A medium or machine that fails reads, for tests (LD_PRELOAD): every read of a file whose
 * path contains $FAIL_READ_PATH that reaches byte $FAIL_READ_AT or past it fails with errno
 * $FAIL_READ_ERRNO (EIO unless set), as a bad sector would; a read that starts before that
 * byte returns the bytes before it (a short read). Other files are read as usual. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* How many bytes of `n` at offset `off` of `fd` may be read: `n`, fewer, or -1 (fail). */
static ssize_t allowed(int fd, off_t off, size_t n) {
    const char *sub = getenv("FAIL_READ_PATH");
    if (!sub || !*sub || off < 0) return (ssize_t)n;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t l = readlink(link, path, sizeof path - 1);
    if (l <= 0) return (ssize_t)n;
    path[l] = 0;
    if (!strstr(path, sub)) return (ssize_t)n;
    const char *at_text = getenv("FAIL_READ_AT");
    off_t at = at_text ? (off_t)atoll(at_text) : 0;
    if (off >= at) {
        const char *e = getenv("FAIL_READ_ERRNO");
        errno = e ? atoi(e) : EIO;
        return -1;
    }
    return (off_t)n > at - off ? (ssize_t)(at - off) : (ssize_t)n;
}

ssize_t read(int fd, void *buf, size_t n) {
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "read");
    ssize_t ok = allowed(fd, lseek(fd, 0, SEEK_CUR), n);
    return ok < 0 ? -1 : real(fd, buf, (size_t)ok);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off) {
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (!real) real = dlsym(RTLD_NEXT, "pread64");
    ssize_t ok = allowed(fd, off, n);
    return ok < 0 ? -1 : real(fd, buf, (size_t)ok, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) {
    return pread64(fd, buf, n, off);
}

ssize_t readv(int fd, const struct iovec *iov, int count) {
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = dlsym(RTLD_NEXT, "readv");
    size_t n = 0;
    for (int i = 0; i < count; i++) n += iov[i].iov_len;
    ssize_t ok = allowed(fd, lseek(fd, 0, SEEK_CUR), n);
    if (ok < 0) return -1;
    if ((size_t)ok == n) return real(fd, iov, count);
    /* Short: read into the first buffers only, up to the byte that fails. */
    return ok == 0 ? 0 : read(fd, iov[0].iov_base, (size_t)ok < iov[0].iov_len ? (size_t)ok : iov[0].iov_len);
}
