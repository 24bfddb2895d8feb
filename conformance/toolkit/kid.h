/* A commanded child, for the cases that watch a task of another process as perf stat
 * and perf record watch the program they start. It is forked here and does nothing
 * until the case commands it, one command at a time, each answered when done: so it
 * runs exactly what the case asks for, when the case has its events open on it. A
 * deferred step kills and reaps it however the case ends.
 *
 * Every command ends on CPU time burned or on the kernel finishing a task, never on the
 * wall clock, and the channel retries what a ptrace stop interrupts: a child traced by
 * an implementation that samples from outside answers as an untraced one does.
 *
 * The child is the suite's, not the implementation's: these calls belong to the SAFE
 * layer (safe.h) and end the case BROKEN, at the caller's line, when the host fails them.
 * They are macros for that line.
 */
#ifndef PECS_TOOLKIT_KID_H
#define PECS_TOOLKIT_KID_H

#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "pecs/case.h"

/* What the child is set up with, before it answers it is ready. */
struct pecs_kid_opts {
	unsigned int flags;          /* PECS_KID_ON_CPU, PECS_KID_AS_UID */
	int cpu;                     /* with PECS_KID_ON_CPU: bound there, with all it makes */
	uid_t uid;                   /* with PECS_KID_AS_UID: its uid and gid, all three */
	uint64_t burn_ns;            /* each burn's CPU time, in user space (pecs_burn_user()) */
	unsigned int pages;          /* fresh pages PECS_KID_PAGES and a forked process touch */
	unsigned int sleeps;         /* times a forked process then blocks (a 1 ms sleep) */
	const char *exec_path;       /* what PECS_KID_EXEC executes */
};

#define PECS_KID_ON_CPU 0x1u
#define PECS_KID_AS_UID 0x2u

/* The commands. pecs_kid_do() returns the id of the task one made, 0 for the others. */
enum pecs_kid_cmd {
	PECS_KID_BURN = 'b', /* burn burn_ns */
	/* A thread burns burn_ns and is joined; answered once /proc no longer lists it, when
	 * its exit has handed its counts to the parent's events. Its tid. */
	PECS_KID_THREAD = 't',
	/* A process burns burn_ns, touches pages fresh pages, sleeps sleeps times and exits;
	 * answered once waited for. Its pid. */
	PECS_KID_FORK = 'f',
	/* The child burns burn_ns itself (a sampler's period is due right at the vfork), then
	 * vforks a process that exits at once; answered once waited for. Its pid. */
	PECS_KID_VFORK = 'v',
	PECS_KID_PAGES = 'p',  /* touch pages fresh pages, one fault each */
	PECS_KID_RENAME = 'n', /* prctl(PR_SET_NAME), the comm an exec changes too */
	/* Execute exec_path (exit status 127 when it cannot). Not answered. */
	PECS_KID_EXEC = 'e',
	PECS_KID_EXIT = 'x', /* exit 0. Not answered. */
};

struct pecs_kid;

/* Fork the child and wait until it is set up. 0, or the errno of its setup as a negative
 * number (it has exited then): what a refused uid or CPU means is the case's to say
 * (ENV_SKIP, or PECS_SAFE_HOST() for BROKEN). *out is set either way; the case's
 * deferred cleanup ends and frees it. BROKEN when no child can be started. */
#define pecs_kid_start(t, o, out) pecs_kid_start_at((t), __FILE__, __LINE__, (o), (out))
int pecs_kid_start_at(struct pecs_t *t, const char *file, int line,
		      const struct pecs_kid_opts *o, struct pecs_kid **out);

pid_t pecs_kid_pid(const struct pecs_kid *c);

/* Send cmd and wait for its answer where one comes. BROKEN when the child does not
 * answer. */
#define pecs_kid_do(t, c, cmd) pecs_kid_do_at((t), __FILE__, __LINE__, (c), (cmd))
pid_t pecs_kid_do_at(struct pecs_t *t, const char *file, int line, struct pecs_kid *c,
		     enum pecs_kid_cmd cmd);

/* Wait until the child has exited, leaving it a zombie (WNOWAIT), and fill *si. A
 * ptrace stop of a tracer in this process is reported to this wait too, and is waited
 * past. */
#define pecs_kid_wait_zombie(t, c, si) \
	pecs_kid_wait_zombie_at((t), __FILE__, __LINE__, (c), (si))
void pecs_kid_wait_zombie_at(struct pecs_t *t, const char *file, int line, struct pecs_kid *c,
			     siginfo_t *si);
/* The same for any child of this process. */
#define pecs_wait_zombie(t, pid, si) pecs_wait_zombie_at((t), __FILE__, __LINE__, (pid), (si))
void pecs_wait_zombie_at(struct pecs_t *t, const char *file, int line, pid_t pid, siginfo_t *si);

/* Reap the exited child; its rusage into *ru when ru is not NULL. */
#define pecs_kid_reap(t, c, ru) pecs_kid_reap_at((t), __FILE__, __LINE__, (c), (ru))
void pecs_kid_reap_at(struct pecs_t *t, const char *file, int line, struct pecs_kid *c,
		      struct rusage *ru);

/* The whole of n bytes over a stream socket (out: sent, else received), retrying what a
 * signal or a ptrace stop interrupts; a send to a closed end is -1, not SIGPIPE. 0 or -1.
 * For a case that runs a child of its own on the same kind of channel. */
int pecs_kid_xfer(int fd, void *buf, size_t n, int out);

#endif /* PECS_TOOLKIT_KID_H */
