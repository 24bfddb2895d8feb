/* What an exec does to the events on a task of another process: enable_on_exec turns
 * them on at the exec and not before (perf_event_enable_on_exec(), from perf_event_exec()
 * in begin_new_exec()), remove_on_exec stops them there for good, the fd still readable
 * (perf_event_remove_on_exec(): perf_event_exit_event() leaves the event in its EXIT
 * state, its count and times frozen), and an inherited copy of either does the same at
 * its own task's exec. Linux 5.13 brought remove_on_exec.
 *
 * Every check compares events on the same task over the same span, so no bound rests on
 * how much the exec and the program after it cost (the machine's business). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/host.h"
#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/safe.h"

#define MS 1000000ull
#define BURN_NS (20 * MS)
#define PAGES 1024
#define EXEC_PATH "/bin/true"
/* The faults a run of EXEC_PATH takes at least after its exec (its loader mapping and
 * relocating the C library: measured 40 to 70 here and in the 6.1 guest). */
#define EXEC_FAULTS 10

struct span {
	uint64_t v[2]; /* {value, time_enabled} */
};

static void read_span(struct pecs_t *t, int fd, struct span *s)
{
	PECS_CHECK(t, pecs_read(t, fd, s->v, sizeof(s->v)) == sizeof(s->v),
		   "read of value and time_enabled");
}

static int open_kid(struct pecs_t *t, pid_t pid, uint64_t config, uint64_t set, uint64_t clear)
{
	struct pecs_attr attr;

	pecs_cnt_attr(t, &attr, config, PECS_FORMAT_TOTAL_TIME_ENABLED);
	attr.flags = (attr.flags | set) & ~clear;
	return pecs_open(t, &attr, pid, -1, -1, 0);
}

static struct pecs_kid *kid_start(struct pecs_t *t)
{
	const struct pecs_kid_opts o = {.burn_ns = BURN_NS, .pages = PAGES, .exec_path = EXEC_PATH};
	struct pecs_kid *k;

	if (access(EXEC_PATH, X_OK))
		PECS_ENV_SKIP(t, "no %s to execute", EXEC_PATH);
	PECS_SAFE_HOST(t, pecs_kid_start(t, &o, &k));
	return k;
}

static void kid_exec(struct pecs_t *t, struct pecs_kid *k)
{
	siginfo_t si;

	pecs_kid_do(t, k, PECS_KID_EXEC);
	pecs_kid_wait_zombie(t, k, &si);
	if (si.si_status == 127)
		PECS_ENV_SKIP(t, "the child could not execute %s", EXEC_PATH);
}

/* An enable_on_exec event counts from the exec, none of what its task did before: it
 * counts no more than an enabled event on the same task does from a read taken after
 * the task burned, touched pages and blocked (the join of a thread), up to its end. An
 * implementation that turns it on anywhere before the exec counts some of those. */
PECS_CASE("Required.Exec.EnableOnExec.CountsFromTheExec", "pid.other", "EXEC-ENABLE-FROM-EXEC")
{
	static const struct {
		uint64_t config;
		const char *name;
	} ev[] = {{PECS_SW_TASK_CLOCK, "task-clock"}, {PECS_SW_PAGE_FAULTS, "page-faults"},
		  {PECS_SW_CONTEXT_SWITCHES, "context-switches"}};
	/* Switches are raised with kernel registers: an unprivileged caller at paranoid 2
	 * counts them only without exclude_kernel, which it may not ask for. */
	int nev = !pecs_host(t)->privileged && pecs_host(t)->paranoid >= 2 ? 2 : 3;
	const uint64_t all = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	struct pecs_kid *k = kid_start(t);
	pid_t pid = pecs_kid_pid(k);
	struct span eoe[3], ctl0[3], ctl1[3];
	int fd[3], ctl[3];

	for (int i = 0; i < nev; i++) {
		uint64_t clear = i == 2 ? all : 0;

		fd[i] = open_kid(t, pid, ev[i].config, PECS_ATTR_ENABLE_ON_EXEC, clear);
		PECS_CHECK_OK(t, fd[i], "a disabled enable_on_exec %s on the child", ev[i].name);
		ctl[i] = open_kid(t, pid, ev[i].config, 0, PECS_ATTR_DISABLED | clear);
		PECS_CHECK_OK(t, ctl[i], "an enabled %s on the child", ev[i].name);
	}
	pecs_kid_do(t, k, PECS_KID_BURN);
	pecs_kid_do(t, k, PECS_KID_PAGES);
	pecs_kid_do(t, k, PECS_KID_THREAD);
	for (int i = 0; i < nev; i++)
		read_span(t, ctl[i], &ctl0[i]);
	kid_exec(t, k);
	for (int i = 0; i < nev; i++) {
		read_span(t, fd[i], &eoe[i]);
		read_span(t, ctl[i], &ctl1[i]);
		PECS_CHECK(t, eoe[i].v[0] <= ctl1[i].v[0] - ctl0[i].v[0], "%s: enable_on_exec "
			   "counted %llu; an enabled event counted %llu from before the exec to the "
			   "end", ev[i].name, (unsigned long long)eoe[i].v[0],
			   (unsigned long long)(ctl1[i].v[0] - ctl0[i].v[0]));
	}
	PECS_CHECK(t, eoe[0].v[0] > 0 && eoe[0].v[1] > 0, "task-clock after the exec: value %llu, "
		   "time_enabled %llu, expected both above 0", (unsigned long long)eoe[0].v[0],
		   (unsigned long long)eoe[0].v[1]);
	PECS_CHECK(t, eoe[1].v[0] >= EXEC_FAULTS, "page-faults after the exec: %llu, expected at "
		   "least %d", (unsigned long long)eoe[1].v[0], EXEC_FAULTS);
}

/* A remove_on_exec event counts until the exec and then stops for good: the program
 * after the exec faults at least EXEC_FAULTS times, which an enabled event on the same
 * task counts and it does not. Its fd stays readable, the count and time_enabled frozen
 * at the exec, and an ENABLE does not bring it back. */
PECS_CASE("Required.Exec.RemoveOnExec.StopsAtTheExec", "pid.other", "EXEC-REMOVE-STOPS")
{
	struct pecs_kid *k = kid_start(t);
	pid_t pid = pecs_kid_pid(k);
	struct span r0, r1, r2, c0, c1;
	int rm = open_kid(t, pid, PECS_SW_PAGE_FAULTS, PECS_ATTR_REMOVE_ON_EXEC, PECS_ATTR_DISABLED);
	int ctl = open_kid(t, pid, PECS_SW_PAGE_FAULTS, 0, PECS_ATTR_DISABLED);

	PECS_CHECK_OK(t, rm, "an enabled remove_on_exec event on the child %d", (int)pid);
	PECS_CHECK_OK(t, ctl, "an enabled event on the child %d", (int)pid);
	pecs_kid_do(t, k, PECS_KID_PAGES);
	read_span(t, rm, &r0);
	read_span(t, ctl, &c0);
	PECS_CHECK(t, r0.v[0] >= PAGES, "before the exec: %llu page faults after the child "
		   "touched %d pages", (unsigned long long)r0.v[0], PAGES);
	kid_exec(t, k);
	read_span(t, rm, &r1);
	read_span(t, ctl, &c1);
	PECS_CHECK(t, c1.v[0] - c0.v[0] >= r1.v[0] - r0.v[0] + EXEC_FAULTS, "over the exec: "
		   "remove_on_exec counted %llu faults, an enabled event %llu; the program "
		   "executed takes at least %d", (unsigned long long)(r1.v[0] - r0.v[0]),
		   (unsigned long long)(c1.v[0] - c0.v[0]), EXEC_FAULTS);
	PECS_CHECK_EQ(t, pecs_ioctl(t, rm, PECS_IOC_ENABLE, 0), 0);
	read_span(t, rm, &r2);
	PECS_CHECK(t, r2.v[0] == r1.v[0] && r2.v[1] == r1.v[1], "after an ENABLE: value %llu, "
		   "time_enabled %llu; at the exec %llu, %llu", (unsigned long long)r2.v[0],
		   (unsigned long long)r2.v[1], (unsigned long long)r1.v[0],
		   (unsigned long long)r1.v[1]);
}

/* ---- a child whose own child executes ------------------------------------------- */

struct parent {
	pid_t pid;
	int fd;
};

static void parent_end(void *arg)
{
	struct parent *p = arg;
	int status;

	close(p->fd);
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, &status, 0);
	}
	free(p);
}

static void touch(unsigned n)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *m = mmap(NULL, (size_t)n * (size_t)pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		_exit(3);
	/* One fault a page: no huge page may serve several (the 6.1 guest's THP did). */
	madvise((void *)m, (size_t)n * (size_t)pg, MADV_NOHUGEPAGE);
	for (unsigned i = 0; i < n; i++)
		m[(size_t)i * (size_t)pg] = 1;
}

/* Touches PAGES pages, then forks a process that touches PAGES pages and executes
 * EXEC_PATH; answers its exit status once it has reaped it. */
static void parent_main(int fd)
{
	char c;

	while (pecs_kid_xfer(fd, &c, 1, 0) == 0 && c == 'g') {
		int32_t answer = -1;
		int status;
		pid_t g;

		touch(PAGES);
		g = fork();
		if (g == 0) {
			touch(PAGES);
			execl(EXEC_PATH, EXEC_PATH, (char *)NULL);
			_exit(127);
		}
		while (g > 0 && waitpid(g, &status, 0) < 0 && errno == EINTR)
			;
		if (g > 0 && WIFEXITED(status))
			answer = WEXITSTATUS(status);
		if (pecs_kid_xfer(fd, &answer, sizeof(answer), 1))
			break;
	}
	_exit(0);
}

static struct parent *parent_start(struct pecs_t *t)
{
	struct parent *p = calloc(1, sizeof(*p));
	int sv[2];

	if (access(EXEC_PATH, X_OK))
		PECS_ENV_SKIP(t, "no %s to execute", EXEC_PATH);
	PECS_SAFE_HOST(t, p ? 0 : -ENOMEM);
	PECS_SAFE_HOST(t, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ? -errno : 0);
	p->fd = sv[0];
	p->pid = fork();
	if (p->pid == 0) {
		close(sv[0]);
		parent_main(sv[1]);
	}
	close(sv[1]);
	pecs_defer(t, parent_end, p);
	PECS_SAFE_HOST(t, p->pid < 0 ? -errno : 0);
	return p;
}

static void parent_go(struct pecs_t *t, struct parent *p)
{
	int32_t answer = -1;
	char c = 'g';

	PECS_SAFE_HOST(t, pecs_kid_xfer(p->fd, &c, 1, 1) ? -EIO : 0);
	PECS_SAFE_HOST(t, pecs_kid_xfer(p->fd, &answer, sizeof(answer), 0) ? -EIO : 0);
	if (answer == 127)
		PECS_ENV_SKIP(t, "the child's child could not execute %s", EXEC_PATH);
	PECS_SAFE_HOST(t, answer == 0 ? 0 : -ECHILD);
}

/* inherit + enable_on_exec, disabled, on a task that never executes: its own event stays
 * off, but the copy in the process it forks turns on at that process's exec, and what
 * the copy counted joins the event when the process exits. None of the pages either
 * touched before that exec is counted: an enabled inherit event counts them all. */
PECS_CASE("Required.Exec.EnableOnExec.InheritedCopyTurnsOnAtItsExec", "pid.other",
	  "EXEC-ENABLE-INHERITED-COPY")
{
	struct parent *p = parent_start(t);
	struct span e, c;
	int eoe = open_kid(t, p->pid, PECS_SW_PAGE_FAULTS,
			   PECS_ATTR_ENABLE_ON_EXEC | PECS_ATTR_INHERIT, 0);
	int ctl = open_kid(t, p->pid, PECS_SW_PAGE_FAULTS, PECS_ATTR_INHERIT, PECS_ATTR_DISABLED);

	PECS_CHECK_OK(t, eoe, "an inherit enable_on_exec event on the child %d", (int)p->pid);
	PECS_CHECK_OK(t, ctl, "an enabled inherit event on the child %d", (int)p->pid);
	parent_go(t, p);
	read_span(t, eoe, &e);
	read_span(t, ctl, &c);
	PECS_CHECK(t, e.v[0] >= EXEC_FAULTS && e.v[1] > 0, "the copy's count after its exec: "
		   "%llu faults, time_enabled %llu; expected at least %d and above 0",
		   (unsigned long long)e.v[0], (unsigned long long)e.v[1], EXEC_FAULTS);
	PECS_CHECK(t, e.v[0] + 2 * PAGES <= c.v[0], "enable_on_exec: %llu faults, enabled: %llu; "
		   "the %d pages each process touched before the exec are in the second only",
		   (unsigned long long)e.v[0], (unsigned long long)c.v[0], PAGES);
}

/* inherit + remove_on_exec: the copy in the forked process counts what that process
 * does before its exec (its PAGES pages) and stops there; the event on the task goes on
 * counting its own. An enabled inherit event also counts the program after the exec. */
PECS_CASE("Required.Exec.RemoveOnExec.InheritedCopyStopsAtItsExec", "pid.other",
	  "EXEC-REMOVE-INHERITED-COPY")
{
	struct parent *p;
	struct span r, c;
	int rm, ctl;

#if defined(__SANITIZE_THREAD__)
	/* The forked processes carry the TSan runtime, whose own faults (thousands, at
	 * moments of its own) swamp the tens this compares: measured 4604 against 4503. */
	PECS_ENV_SKIP(t, "a ThreadSanitizer runner's forked processes fault at the runtime's "
		      "own moments, more than the exec's faults this compares");
#endif
	p = parent_start(t);
	rm = open_kid(t, p->pid, PECS_SW_PAGE_FAULTS, PECS_ATTR_REMOVE_ON_EXEC | PECS_ATTR_INHERIT,
		      PECS_ATTR_DISABLED);
	ctl = open_kid(t, p->pid, PECS_SW_PAGE_FAULTS, PECS_ATTR_INHERIT, PECS_ATTR_DISABLED);

	PECS_CHECK_OK(t, rm, "an inherit remove_on_exec event on the child %d", (int)p->pid);
	PECS_CHECK_OK(t, ctl, "an enabled inherit event on the child %d", (int)p->pid);
	parent_go(t, p);
	read_span(t, rm, &r);
	read_span(t, ctl, &c);
	PECS_CHECK(t, r.v[0] >= 2 * PAGES, "remove_on_exec: %llu faults; the child and its child "
		   "each touched %d pages before any exec", (unsigned long long)r.v[0], PAGES);
	PECS_CHECK(t, c.v[0] >= r.v[0] + EXEC_FAULTS, "remove_on_exec: %llu faults, enabled: "
		   "%llu; the program executed takes at least %d, in the second only",
		   (unsigned long long)r.v[0], (unsigned long long)c.v[0], EXEC_FAULTS);
}
