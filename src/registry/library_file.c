/*
 * A plugin library's file, checked before the dynamic loader maps it.
 *
 * dlopen maps every PT_LOAD segment straight from the file and believes the
 * sizes the program headers give. A segment that ends past the end of the
 * file (a truncated copy, an interrupted install or download) is mapped all
 * the same, and the loader's first touch of a page past the end of the file
 * raises SIGBUS inside dlopen: the process dies before any error can be
 * returned. So the header and the program headers are read here with pread
 * on a descriptor (an mmap would fault the same way), and each loadable
 * segment's file range is checked against the file's size, before the
 * loader sees the file. Checks on what the loader itself reports cleanly
 * (alignment, dynamic section, symbols) are left to it.
 *
 * The same descriptor is hashed, so the content hash the registry records
 * describes the bytes that were checked. The file can still change between
 * this check and dlopen; libraries are trusted not to be swapped while they
 * load (whoever can do that can as well replace the code).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "library_file.h"

/* The ELF flavour this process loads: its word size, byte order and
 * machine. */
#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr elf_ehdr;
typedef Elf64_Phdr elf_phdr;
#define HOST_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr elf_ehdr;
typedef Elf32_Phdr elf_phdr;
#define HOST_CLASS ELFCLASS32
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* Without a known machine the check is skipped; the loader still refuses a
 * foreign one, with its own words. */
#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__s390x__)
#define HOST_MACHINE EM_S390
#endif

/* Bytes hashed per read. */
#define HASH_CHUNK 16384

static const char *machine_name(unsigned m)
{
    switch (m) {
    case EM_386:
        return "x86";
    case EM_X86_64:
        return "x86-64";
    case EM_ARM:
        return "ARM";
    case EM_AARCH64:
        return "AArch64";
    case EM_RISCV:
        return "RISC-V";
    case EM_PPC64:
        return "PowerPC64";
    case EM_S390:
        return "s390";
    default:
        return "another machine";
    }
}

static const char *class_name(unsigned c)
{
    return c == ELFCLASS32 ? "32-bit" : c == ELFCLASS64 ? "64-bit" : "unknown-class";
}

static const char *type_name(unsigned t)
{
    switch (t) {
    case ET_REL:
        return "a relocatable object (.o)";
    case ET_EXEC:
        return "an executable";
    case ET_CORE:
        return "a core dump";
    default:
        return "unknown";
    }
}

/* A file that is not a loadable library: the reason (prt_registry_load_library
 * puts "cannot load plugin library PATH" before every load error). */
#define BAD(...) base_error(PRT_ERR_MALFORMED, __VA_ARGS__)

static prt_status read_error(void)
{
    return base_error(PRT_ERR_IO, "reading it failed: %s", strerror(errno));
}

/* The ELF header: magic, the host's class and byte order, a shared object
 * for the host's machine, program headers of the host's layout. */
static prt_status check_header(int fd, uint64_t size, elf_ehdr *h)
{
    int64_t got;
    memset(h, 0, sizeof *h);
    got = base_read_at(fd, h, sizeof *h, 0);
    if (got < 0)
        return read_error();
    if (got == 0)
        return BAD("the file is empty");
    if (memcmp(h->e_ident, ELFMAG, got < SELFMAG ? (size_t)got : SELFMAG) != 0)
        return BAD("not an ELF file (it does not start with \\177ELF)");
    if (got > EI_DATA && h->e_ident[EI_CLASS] != HOST_CLASS)
        return BAD("a %s ELF file, this process loads %s ones",
                   class_name(h->e_ident[EI_CLASS]), class_name(HOST_CLASS));
    if (got > EI_DATA && h->e_ident[EI_DATA] != HOST_DATA)
        return BAD("a %s ELF file, this process is %s",
                   h->e_ident[EI_DATA] == ELFDATA2MSB ? "big-endian" : "little-endian",
                   HOST_DATA == ELFDATA2MSB ? "big-endian" : "little-endian");
    if ((size_t)got < sizeof *h)
        return BAD("truncated: the ELF header needs %zu bytes, the file "
                   "has %llu",
                   sizeof *h, (unsigned long long)size);
    if (h->e_ident[EI_VERSION] != EV_CURRENT || h->e_version != EV_CURRENT)
        return BAD("ELF version %u, not %u", (unsigned)h->e_ident[EI_VERSION],
                   (unsigned)EV_CURRENT);
    if (h->e_type != ET_DYN)
        return BAD("ELF type %u is %s, not a shared library", (unsigned)h->e_type,
                   type_name(h->e_type));
#ifdef HOST_MACHINE
    if (h->e_machine != HOST_MACHINE)
        return BAD("built for %s (ELF machine %u), this process runs on "
                   "%s (%u)",
                   machine_name(h->e_machine), (unsigned)h->e_machine,
                   machine_name(HOST_MACHINE), (unsigned)HOST_MACHINE);
#endif
    if (h->e_phentsize != sizeof(elf_phdr))
        return BAD("program header entries of %u bytes, not %zu",
                   (unsigned)h->e_phentsize, sizeof(elf_phdr));
    /* PN_XNUM moves the count into section 0, which loaders do not read. */
    if (h->e_phnum == 0 || h->e_phnum == PN_XNUM)
        return BAD("%s program headers", h->e_phnum ? "too many" : "no");
    /* Once the offset is within the file (< 2^63), adding a table of under
     * 2^22 bytes cannot wrap. */
    if (h->e_phoff > size || h->e_phoff + (uint64_t)h->e_phnum * sizeof(elf_phdr) > size)
        return BAD("truncated: the program headers end at byte %llu, the "
                   "file has %llu",
                   (unsigned long long)h->e_phoff +
                       (unsigned long long)h->e_phnum * sizeof(elf_phdr),
                   (unsigned long long)size);
    return PRT_OK;
}

/* Every loadable segment's file bytes lie within the file. */
static prt_status check_segments(int fd, uint64_t size, const elf_ehdr *h)
{
    int loads = 0;
    for (unsigned i = 0; i < h->e_phnum; i++) {
        elf_phdr ph;
        int64_t got = base_read_at(fd, &ph, sizeof ph,
                                   (uint64_t)h->e_phoff + (uint64_t)i * sizeof ph);
        if (got < 0)
            return read_error();
        if ((size_t)got < sizeof ph) /* the file shrank since fstat */
            return BAD("truncated in program header %u", i);
        if (ph.p_type != PT_LOAD)
            continue;
        loads++;
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
            return BAD("truncated: segment %u ends at byte %llu, the file "
                       "has %llu",
                       i,
                       (unsigned long long)ph.p_offset + (unsigned long long)ph.p_filesz,
                       (unsigned long long)size);
        if (ph.p_filesz > ph.p_memsz)
            return BAD("segment %u holds %llu bytes of the file in %llu "
                       "bytes of memory",
                       i, (unsigned long long)ph.p_filesz,
                       (unsigned long long)ph.p_memsz);
    }
    if (loads == 0)
        return BAD("no loadable segment");
    return PRT_OK;
}

static prt_status hash_fd(int fd, uint64_t size, uint64_t *out)
{
    unsigned char chunk[HASH_CHUNK];
    uint64_t h = BASE_FNV_SEED;
    for (uint64_t off = 0; off < size;) {
        size_t want = size - off < sizeof chunk ? (size_t)(size - off) : sizeof chunk;
        int64_t got = base_read_at(fd, chunk, want, off);
        if (got < 0)
            return read_error();
        if (got == 0)
            return base_error(PRT_ERR_IO, "it shrank while being read");
        h = base_fnv1a64(chunk, (size_t)got, h);
        off += (uint64_t)got;
    }
    *out = h;
    return PRT_OK;
}

prt_status registry_check_library_file(const char *path, registry_file_id *out)
{
    struct stat sb;
    elf_ehdr h;
    uint64_t size;
    prt_status st;
    const char *why;
    int fd;
    memset(out, 0, sizeof *out);
    if (!strchr(path, '/'))
        return PRT_OK;
    if (base_open_regular(path, &fd, &size, &why) != 0)
        return base_error(PRT_ERR_IO, "%s", why);
    /* The file's identity, for the record of loaded files. */
    if (fstat(fd, &sb) != 0) {
        st = base_error(PRT_ERR_IO, "%s", strerror(errno));
    } else {
        if (!(st = check_header(fd, size, &h)) && !(st = check_segments(fd, size, &h)))
            st = hash_fd(fd, size, &out->hash);
        out->known = st == PRT_OK;
        out->dev = (uint64_t)sb.st_dev;
        out->ino = (uint64_t)sb.st_ino;
    }
    close(fd);
    return st;
}

void registry_remove_temp_library(const char *path, const char *dir)
{
    if (path && path[0])
        (void)unlink(path);
    if (dir && dir[0])
        (void)rmdir(dir);
}

/* write(2) until done. 0, or -1 with errno set. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

prt_status registry_write_temp_library(const char *file_name, const void *bytes,
                                       size_t size, char *path, char *dir, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    int fd, n, err;
    path[0] = dir[0] = '\0';
    if (!tmp || !tmp[0])
        tmp = "/tmp";
    if (!file_name[0] || strchr(file_name, '/'))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "'%.200s' is not a plain file name for its temporary copy",
                          file_name);
    n = snprintf(dir, cap, "%s/plugrt-lib-XXXXXX", tmp);
    if (n < 0 || (size_t)n >= cap)
        return base_error(PRT_ERR_IO, "TMPDIR %.200s is too long for a temporary file",
                          tmp);
    /* mkdtemp makes the directory 0700 under a name nobody had: only this
     * user can put a file there, so the file the loader opens is ours. */
    if (!mkdtemp(dir)) {
        err = errno;
        dir[0] = '\0';
        return base_error(PRT_ERR_IO,
                          "cannot make a private directory in %s for its copy: %s "
                          "(set TMPDIR to a writable directory)",
                          tmp, strerror(err));
    }
    n = snprintf(path, cap, "%s/%s", dir, file_name);
    if (n < 0 || (size_t)n >= cap) {
        registry_remove_temp_library(NULL, dir);
        path[0] = dir[0] = '\0';
        return base_error(PRT_ERR_IO, "the name of its temporary copy is too long");
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
    if (fd < 0) {
        err = errno;
        registry_remove_temp_library(NULL, dir);
        path[0] = dir[0] = '\0';
        return base_error(PRT_ERR_IO, "cannot create its temporary copy in %s: %s", tmp,
                          strerror(err));
    }
    err = write_all(fd, bytes, size) != 0 ? errno : 0;
    if (close(fd) != 0 && !err)
        err = errno;
    if (err) {
        registry_remove_temp_library(path, dir);
        path[0] = dir[0] = '\0';
        return base_error(PRT_ERR_IO, "cannot write its temporary copy in %s: %s", tmp,
                          strerror(err));
    }
    return PRT_OK;
}
