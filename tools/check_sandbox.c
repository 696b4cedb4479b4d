/*
 * One check per child process. The child opens the library itself, runs
 * the check and leaves its verdict in shared memory; the parent waits. A
 * plugin that crashes, hangs (an alarm ends the child) or exits fails the
 * check it was in, with the signal and the entry it was in, and the
 * checker goes on with the next check. A failure recorded before a crash
 * (a clone found sharing memory, then freed twice) is kept, and the crash
 * is added to it.
 *
 * Each child leads a process group of its own, and whatever is left of
 * the group once the child has been reaped (processes a plugin forked and
 * never ended) is counted, killed as a group and fails the check: such
 * processes would hold the checker's stdout and stderr open, so that
 * whatever reads them waits forever, and pile up with every call. A
 * process that leaves the group (setsid) escapes this. Should the checker
 * itself be ended by a signal (Ctrl-C, a CI timeout), the running check's
 * group is killed first.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

chk_shared *chk_shared_create(void)
{
    void *p = mmap(NULL, sizeof(chk_shared), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void chk_shared_destroy(chk_shared *sh)
{
    if (sh)
        munmap(sh, sizeof *sh);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGABRT:
        return "SIGABRT";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGALRM:
        return "SIGALRM";
    case SIGKILL:
        return "SIGKILL";
    default:
        return "a signal";
    }
}

/* ---- process groups ------------------------------------------------------------ */

/* The group of the check running now, for on_signal (0: none). */
static volatile sig_atomic_t running_group;

static void on_signal(int sig)
{
    if (running_group > 0)
        kill(-(pid_t)running_group, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Once: a checker ended by a signal ends the running check's group first
 * (its children are in another group, which a terminal's Ctrl-C does not
 * reach). Signals the checker was started ignoring stay ignored. */
static void catch_signals(void)
{
    static int done;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    if (done)
        return;
    done = 1;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Live processes (not zombies) in process group `group`, from /proc; the
 * name of one of them in first (cap bytes). -1 when /proc cannot be read. */
static int group_members(pid_t group, char *first, size_t cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char path[64], stat[512], *end;
        char state;
        long pgrp;
        FILE *f;
        size_t got;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        if (!(f = fopen(path, "r")))
            continue; /* gone meanwhile */
        got = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[got] = '\0';
        /* "pid (comm) state ppid pgrp ...": comm may hold spaces and ')'. */
        end = strrchr(stat, ')');
        if (!end || sscanf(end + 1, " %c %*d %ld", &state, &pgrp) != 2 || pgrp != group ||
            state == 'Z' || state == 'X')
            continue;
        if (n++ == 0 && cap) {
            char *open = strchr(stat, '(');
            int len = open && end > open ? (int)(end - open - 1) : 0;
            snprintf(first, cap, "%.*s", len, open ? open + 1 : "");
        }
    }
    closedir(d);
    return n;
}

/* After the group's leader was reaped: how many processes were left in
 * the group (0 when none), all of them killed. */
static int end_group(pid_t group, char *first, size_t cap)
{
    int left;
    if (cap)
        first[0] = '\0';
    if (kill(-group, 0) != 0)
        return 0; /* nobody left, not even a zombie */
    left = group_members(group, first, cap);
    if (left < 0)
        left = 1; /* no /proc: kill(-group, 0) found one, maybe a zombie */
    /* Again while any are alive: one may fork while the group is killed. */
    for (int round = 0; round < 100 && kill(-group, SIGKILL) == 0; round++) {
        struct timespec tick = {0, 1000000};
        if (group_members(group, NULL, 0) <= 0)
            break;
        nanosleep(&tick, NULL);
    }
    return left;
}

/* ---- the child ------------------------------------------------------------------- */

static void child(chk_ctx *c, chk_fn fn, int open_library, int timeout_s)
{
    char msg[CHK_MSG];
    /* Its own process group, which the parent kills when it ends (set
     * there too, so that neither has to wait for the other). */
    setpgid(0, 0);
    /* Another group than the terminal's: with `stty tostop`, its writes
     * to the terminal would stop it until the alarm. */
    signal(SIGTTOU, SIG_IGN);
    /* The report is the parent's stdout: what a plugin prints goes to
     * stderr, so it cannot break the JSON. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    alarm((unsigned)timeout_s);
    if (open_library) {
        if (chk_library_open(c, msg, sizeof msg) != 0) {
            chk_fail(c, "cannot open the library: %s", msg);
            _exit(0);
        }
        if (c->creator_index >= 0) {
            if (c->creator_index >= c->lib->nb_creators ||
                !c->lib->creators[c->creator_index]) {
                chk_fail(c, "the library lists other creators on another call of its "
                            "entry point");
                _exit(0);
            }
            c->creator = c->lib->creators[c->creator_index];
        }
    }
    fn(c);
    fflush(NULL);
    /* _exit: the parent's buffers are not flushed twice, and objects a
     * broken plugin could not free are no leak of the checker's. */
    _exit(0);
}

/* Waits for the child. Its alarm ends a hang; should the plugin have
 * silenced SIGALRM, the child is killed a little later. Returns 1 when it
 * had to be killed. */
static int wait_child(pid_t pid, int timeout_s, int *status)
{
    double start = cli_now();
    long nap = 50000; /* ns: short first, most checks take milliseconds */
    for (;;) {
        struct timespec tick = {0, nap};
        pid_t got = waitpid(pid, status, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR))
            return 0;
        if (cli_now() - start > timeout_s + 2.0) {
            kill(pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR)
                ;
            return 1;
        }
        nanosleep(&tick, NULL);
        nap = nap < 2000000 ? nap * 2 : nap;
    }
}

/* What the crash interrupted: the entry it was in, or the last one. */
static void where(const chk_shared *sh, char *buf, size_t cap)
{
    if (!sh->doing[0])
        snprintf(buf, cap, "before any plugin call");
    else
        snprintf(buf, cap, "%s %s", sh->in_call ? "in" : "after", sh->doing);
}

int chk_sandbox_run(chk_ctx *c, chk_fn fn, int open_library, int timeout_s)
{
    chk_shared *sh = c->sh;
    char what[700], at[600], first[64];
    int status = 0, killed, left;
    pid_t pid;
    memset(&sh->result, 0, sizeof sh->result);
    sh->result.tactic = -1;
    sh->result.element = -1;
    sh->doing[0] = '\0';
    sh->in_call = 0;
    sh->silent[0] = '\0';
    sh->nb_silent = 0;
    catch_signals();
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        chk_fail(c, "cannot fork a process for the check: %s", strerror(errno));
        return 1;
    }
    if (pid == 0)
        child(c, fn, open_library, timeout_s);
    setpgid(pid, pid); /* fails harmlessly if the child did it first */
    running_group = pid;
    killed = wait_child(pid, timeout_s, &status);
    left = end_group(pid, first, sizeof first);
    running_group = 0;
    where(sh, at, sizeof at);
    if (left > 0) {
        /* What the check found stays first; then what it left. */
        char orphans[300];
        size_t n = strlen(sh->result.message);
        snprintf(orphans, sizeof orphans,
                 "the plugin left %d process%s behind%s%s%s, killed as a group: a "
                 "process it starts must end before the entry that started it returns",
                 left, left == 1 ? "" : "es", first[0] ? " (\"" : "", first,
                 first[0] ? "\")" : "");
        if (sh->result.verdict == CHK_FAIL) {
            snprintf(sh->result.message + n, sizeof sh->result.message - n, "; and %s",
                     orphans);
        } else {
            sh->result.verdict = CHK_FAIL;
            sh->result.shape[0] = sh->result.tensor[0] = '\0';
            sh->result.tactic = -1;
            sh->result.element = -1;
            snprintf(sh->result.message, sizeof sh->result.message, "%s", orphans);
        }
    }
    if (killed || (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM))
        snprintf(what, sizeof what, "timed out after %d s %s", timeout_s, at);
    else if (WIFSIGNALED(status))
        snprintf(what, sizeof what, "crashed: %s (%s) %s", signal_name(WTERMSIG(status)),
                 strsignal(WTERMSIG(status)), at);
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        snprintf(what, sizeof what, "the process exited with status %d %s",
                 WEXITSTATUS(status), at);
    else if (sh->result.verdict == CHK_NONE)
        snprintf(what, sizeof what, "the process exited (status 0) %s", at);
    else
        return 0;
    if (sh->result.verdict == CHK_FAIL) {
        size_t n = strlen(sh->result.message);
        snprintf(sh->result.message + n, sizeof sh->result.message - n, "; then %s",
                 what);
        return 1;
    }
    memset(&sh->result, 0, sizeof sh->result);
    sh->result.verdict = CHK_FAIL;
    sh->result.tactic = -1;
    sh->result.element = -1;
    snprintf(sh->result.message, sizeof sh->result.message, "%s", what);
    return 1;
}
