#define _GNU_SOURCE
#include "pecs/toolkit/breakpoint.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

/* The probe's target: any aligned user-space word of this process will do. */
static volatile uint64_t probe_word __attribute__((aligned(8)));

void pecs_bp_attr(struct pecs_t *t, struct pecs_attr *a, uint32_t bp_type, const volatile void *addr,
		  uint64_t len)
{
	pecs_attr_counting(t, a, 0);
	a->type = PECS_TYPE_BREAKPOINT;
	a->bp_type = bp_type;
	a->config1 = (uint64_t)(uintptr_t)addr;
	a->config2 = len;
}

static void skip_if_absent(struct pecs_t *t, const char *file, int line, int r)
{
	if (r == -ENOENT)
		pecs_end(t, PECS_ENV_SKIP, file, line,
			 "no breakpoint PMU: a valid write breakpoint is ENOENT (a kernel built "
			 "without CONFIG_HAVE_HW_BREAKPOINT)");
	if (r == -EOPNOTSUPP)
		pecs_end(t, PECS_ENV_SKIP, file, line,
			 "no debug registers: a valid write breakpoint is EOPNOTSUPP "
			 "(hw_breakpoint_event_init: no slot for data breakpoints)");
}

void pecs_bp_require_at(struct pecs_t *t, const char *file, int line)
{
	struct pecs_attr a;
	int r;

	pecs_bp_attr(t, &a, PECS_BP_W, &probe_word, 8);
	r = pecs_open(t, &a, 0, -1, -1, 0);
	if (r >= 0)
		pecs_close(t, r);
	skip_if_absent(t, file, line, r);
}

int pecs_bp_open_at(struct pecs_t *t, const char *file, int line, struct pecs_attr *a, pid_t pid,
		    int cpu, int group_fd)
{
	int fd = pecs_open(t, a, pid, cpu, group_fd, 0);

	if (fd >= 0)
		return fd;
	skip_if_absent(t, file, line, fd);
	pecs_end(t, PECS_FAIL, file, line,
		 "perf_event_open(breakpoint bp_type %u, bp_addr %#llx, bp_len %llu, pid %d, "
		 "cpu %d) failed: %s", a->bp_type, (unsigned long long)a->config1,
		 (unsigned long long)a->config2, (int)pid, cpu, pecs_retname(fd));
	return fd;
}

int pecs_bp_has_bpext(void)
{
	char line[4096];
	int found = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5))
			found = strstr(line, " bpext") != NULL;
	fclose(f);
	return found;
}

/* DR7: L0 and L1 enabled; DR0 an 8-byte write (R/W 01, LEN 10), DR1 an execute (00, 00). */
#define DR7_PROBE (0x1ul | 0x4ul | (0x1ul << 16) | (0x2ul << 18))
#define DR6_B0 0x1ul
#define DR6_B1 0x2ul

static volatile uint64_t fired_word __attribute__((aligned(8)));

__attribute__((noinline)) static void fired_fn(void)
{
	__asm__ volatile("" ::: "memory");
}

static void probe_child(void)
{
	void (*volatile fn)(void) = fired_fn;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		_exit(errno & 0xff);
	raise(SIGSTOP);
	fired_word = 1;
	fn();
	_exit(0);
}

static int poke_dr(pid_t pid, int n, unsigned long v)
{
	long off = offsetof(struct user, u_debugreg) + n * sizeof(long);

	return ptrace(PTRACE_POKEUSER, pid, off, (void *)v) < 0 ? -errno : 0;
}

/* What fired in a traced child: DR6_B0 | DR6_B1 bits, or -errno where ptrace is refused
 * (the child then exits at once, with the errno as its status). The child is killed and reaped before this returns. */
static long hardware_fires(void)
{
	long fired = 0;
	int st, err = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		probe_child();
	if (waitpid(pid, &st, 0) != pid)
		return -ECHILD;
	if (!WIFSTOPPED(st)) /* PTRACE_TRACEME refused: it has exited with the errno */
		return WIFEXITED(st) && WEXITSTATUS(st) ? -WEXITSTATUS(st) : -ECHILD;
	err = poke_dr(pid, 0, (unsigned long)&fired_word);
	if (!err)
		err = poke_dr(pid, 1, (unsigned long)(uintptr_t)fired_fn);
	if (!err)
		err = poke_dr(pid, 7, DR7_PROBE);
	while (!err && WIFSTOPPED(st) && ptrace(PTRACE_CONT, pid, NULL, NULL) == 0 &&
	       waitpid(pid, &st, 0) == pid && WIFSTOPPED(st))
		fired |= ptrace(PTRACE_PEEKUSER, pid,
				offsetof(struct user, u_debugreg) + 6 * sizeof(long), NULL) &
			 (DR6_B0 | DR6_B1);
	if (WIFSTOPPED(st)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	return err ? err : fired;
}

void pecs_bp_require_firing_at(struct pecs_t *t, const char *file, int line, uint32_t type)
{
	static long fired; /* asked once a process */
	static int asked;
	unsigned long bit = type == PECS_BP_X ? DR6_B1 : DR6_B0;

	pecs_bp_require_at(t, file, line);
	if (!asked) {
		fired = hardware_fires();
		asked = 1;
	}
	if (fired < 0)
		pecs_end(t, PECS_ENV_SKIP, file, line,
			 "cannot ask this host's debug registers whether they fire: a child's "
			 "PTRACE_TRACEME or PTRACE_POKEUSER failed with %s (strace -f, which traces "
			 "the child itself, makes it EPERM), and where they never fire no count "
			 "can be judged",
			 pecs_errname((int)-fired));
	if (!(fired & bit))
		pecs_end(t, PECS_ENV_SKIP, file, line,
			 "this host's debug registers never fire: a traced child's %s breakpoint "
			 "set with PTRACE_POKEUSER (DR%d, DR7 %#lx) raised no SIGTRAP (DR6 bits "
			 "%#lx)", type == PECS_BP_X ? "execute" : "8-byte write",
			 type == PECS_BP_X ? 1 : 0, DR7_PROBE, fired);
}
