/* Events on a task of another process: a live child (the positive control beside the
 * exited one of Open.PidCpu.ExitedPidEsrch), a child that runs as another uid, and a
 * zombie. The child is the toolkit's commanded one (pecs/toolkit/kid.h), so it stays
 * alive exactly as long as the case needs it; a deferred step kills and reaps it
 * whichever way the case ends. */
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/version.h"

#define MS 1000000ull
/* A quarter of it is asked of the task clock (below): 5 ms, far from none. */
#define BURN_NS (20 * MS)
#define OTHER_UID 65534

/* A child that burns BURN_NS when told, running as uid (-1: ours). 0, or the child's
 * setup errno as a negative number (the child has then exited). */
static int child_start(struct pecs_t *t, uid_t uid, struct pecs_kid **out)
{
	struct pecs_kid_opts o = {.burn_ns = BURN_NS};

	if (uid != (uid_t)-1) {
		o.flags |= PECS_KID_AS_UID;
		o.uid = uid;
	}
	return pecs_kid_start(t, &o, out);
}

/* A live task of another process is no exited one: its mapped event polls 0 (no
 * POLLHUP) while it runs, a group may be led by an event on it (not ENODEV), and the
 * count follows the CPU time it spends. Once it exits the same event hangs up. */
PECS_CASE("Required.Open.PidTask.LiveChildCountsUntilItExits", "pid.other,poll,mmap",
	  "OPEN-PID-LIVE-CHILD")
{
	struct pecs_kid *ch;
	struct pecs_attr attr;
	struct pecs_ring r;
	uint64_t value = 0;
	int leader, member, rev;
	pid_t pid;

	PECS_CHECK_OK(t, child_start(t, (uid_t)-1, &ch));
	pid = pecs_kid_pid(ch);
	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	attr.flags &= ~PECS_ATTR_DISABLED;
	leader = pecs_open(t, &attr, pid, -1, -1, 0);
	PECS_CHECK_OK(t, leader, "an event on the live child %d", (int)pid);
	member = pecs_open(t, &attr, pid, -1, leader, 0);
	PECS_CHECK_OK(t, member, "a member of a group led on the live child");
	PECS_CHECK_OK(t, pecs_ring_map(t, leader, 1, PROT_READ | PROT_WRITE, &r));
	rev = pecs_poll(t, leader, POLLIN, 0);
	PECS_CHECK(t, rev == 0, "while the child lives: revents %s, expected 0",
		   pecs_retname(rev));
	pecs_kid_do(t, ch, PECS_KID_BURN);
	PECS_CHECK_OK(t, pecs_event_value(t, leader, &value));
	/* The child measured BURN_NS on its own CPU-time clock after the event was enabled.
	 * A task clock runs below that clock by up to half under ptrace (measured under
	 * strace -f: 44.8 of 50 ms, and 36 of 50 in a sibling case), so a quarter is asked:
	 * enough to tell the child's time from none of it. */
	PECS_CHECK(t, value >= BURN_NS / 4, "task clock of the child %llu ns after it "
		   "burned %llu ns", (unsigned long long)value, (unsigned long long)BURN_NS);
	pecs_kid_do(t, ch, PECS_KID_EXIT);
	pecs_kid_reap(t, ch, NULL);
	rev = pecs_poll(t, leader, POLLIN, 0);
	PECS_CHECK(t, rev >= 0 && (rev & POLLHUP), "after the child exited: revents %s, "
		   "expected POLLHUP", pecs_retname(rev));
	/* Before Linux 6.12 nothing looks at the leader's state: the exited task's context
	 * is not the caller's, EINVAL (as Open.GroupFd.LeaderTaskExitedEnodev). */
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, leader, 0),
		       pecs_linux_before(t, 6, 12) ? EINVAL : ENODEV,
		       "joining a group led on the exited child");
}

/* A privileged caller (CAP_PERFMON or CAP_SYS_ADMIN) may watch a task of any uid; the
 * refusal for an unprivileged one is Open.PidCpu.OtherUsersTaskNeedsPrivilege. */
PECS_CASE("Required.Open.PidTask.OtherUidTaskPrivilegedOpens", "pid.other,policy",
	  "OPEN-PID-OTHER-UID-PRIV")
{
	struct pecs_kid *ch;
	struct pecs_attr attr;
	int err;

	PECS_NEEDS_PRIVILEGE(t);
	if (getuid() != 0)
		PECS_ENV_SKIP(t, "only root can start a task of another uid here (uid %d)",
			      (int)getuid());
	err = child_start(t, OTHER_UID, &ch);
	if (err)
		PECS_ENV_SKIP(t, "the child could not become uid %d: %s", OTHER_UID,
			      pecs_errname(-err));
	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	PECS_CHECK_OK(t, pecs_open(t, &attr, pecs_kid_pid(ch), -1, -1, 0),
		      "an event on the child %d of uid %d", (int)pecs_kid_pid(ch), OTHER_UID);
}

/* A zombie has exited: find_get_context refuses a task that is PF_EXITING. */
PECS_CASE("Required.Open.PidTask.ZombieEsrch", "pid.other", "OPEN-PID-ZOMBIE-ESRCH")
{
	struct pecs_kid *ch;
	struct pecs_attr attr;
	siginfo_t info;

	PECS_CHECK_OK(t, child_start(t, (uid_t)-1, &ch));
	pecs_kid_do(t, ch, PECS_KID_EXIT);
	pecs_kid_wait_zombie(t, ch, &info);
	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	PECS_CHECK_ERR(t, pecs_open(t, &attr, pecs_kid_pid(ch), -1, -1, 0), ESRCH,
		       "the zombie %d", (int)pecs_kid_pid(ch));
}
