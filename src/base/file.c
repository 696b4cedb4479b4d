/* Files that plugrt reads by path (a plugin library, a timing cache):
 * opened so that what is checked is what is read, and without waiting. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "it is a directory, not a regular file";
    if (S_ISFIFO(mode))
        return "it is a FIFO, not a regular file";
    if (S_ISSOCK(mode))
        return "it is a socket, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "it is a device, not a regular file";
    return "it is not a regular file";
}

int base_open_regular(const char *path, int *out_fd, uint64_t *out_size, const char **why)
{
    struct stat sb;
    int err, fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = strerror(errno);
        return errno;
    }
    if (fstat(fd, &sb) != 0) {
        err = errno;
        *why = strerror(err);
        close(fd);
        return err;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size < 0) {
        *why = file_kind(sb.st_mode);
        close(fd);
        return -1;
    }
    *out_fd = fd;
    *out_size = (uint64_t)sb.st_size;
    return 0;
}

int64_t base_read_at(int fd, void *buf, size_t n, uint64_t offset)
{
    size_t got = 0;
    if (offset > (uint64_t)INT64_MAX - n) {
        errno = EINVAL; /* as pread says of a negative offset */
        return -1;
    }
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(offset + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (int64_t)got;
}
