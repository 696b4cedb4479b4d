/*
 * One check per child process. The child opens the library itself, runs
 * the check and leaves its verdict in shared memory; the parent waits. A
 * plugin that crashes, hangs (an alarm ends the child) or exits fails the
 * check it was in, with the signal and the entry it was in, and the
 * checker goes on with the next check. A failure recorded before a crash
 * (a clone found sharing memory, then freed twice) is kept, and the crash
 * is added to it.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
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

static void child(chk_ctx *c, chk_fn fn, int open_library, int timeout_s)
{
    char msg[CHK_MSG];
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
    char what[700], at[600];
    int status = 0, killed;
    pid_t pid;
    memset(&sh->result, 0, sizeof sh->result);
    sh->result.tactic = -1;
    sh->result.element = -1;
    sh->doing[0] = '\0';
    sh->in_call = 0;
    sh->silent[0] = '\0';
    sh->nb_silent = 0;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        chk_fail(c, "cannot fork a process for the check: %s", strerror(errno));
        return 1;
    }
    if (pid == 0)
        child(c, fn, open_library, timeout_s);
    killed = wait_child(pid, timeout_s, &status);
    where(sh, at, sizeof at);
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
