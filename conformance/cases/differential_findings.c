/* Behaviours the differential tool (conformance/differential) found ref getting wrong,
 * each proven on the kernel first: aux_sample_size with no AUX leader, the file ioctls
 * the VFS answers for every fd, a task event bound to a CPU its task is not on, and poll
 * of an fd that is no longer open. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "pecs/toolkit/cpu.h"
#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/wait.h"

/* perf_get_aux_event(): a sample of AUX data needs an AUX event leading the group, which
 * no software event is, alone or as the leader. */
PECS_CASE("Required.Open.Aux.SampleSizeWithoutAuxLeaderEinval", "",
	  "OPEN-AUX-SAMPLE-SIZE-EINVAL")
{
	struct pecs_attr a;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	int leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	a.aux_sample_size = 4096;
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), EINVAL, "alone");
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, leader, 0), EINVAL,
		       "in a software leader's group");
	/* an unknown type is refused first: the AUX check comes after the PMU lookup */
	a.type = 0x7fff;
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), ENOENT);
}

/* do_vfs_ioctl() answers these before perf_ioctl() sees the request. */
PECS_CASE("Required.Ioctl.Vfs.GenericFileIoctlsAnswered", "", "IOC-VFS-GENERIC")
{
	struct pecs_attr a;
	int on = 1, off = 0, bsize = -1;
	uint64_t v;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	int fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, FIOCLEX, 0), "FIOCLEX");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, FIONCLEX, 0), "FIONCLEX");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, FIONBIO, (unsigned long)&on), "FIONBIO on");
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, FIONBIO, 0), EFAULT, "FIONBIO reads its int");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, FIOASYNC, (unsigned long)&off), "FIOASYNC off");
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, FIOASYNC, 0), EFAULT, "FIOASYNC reads its int");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, FIGETBSZ, (unsigned long)&bsize), "FIGETBSZ");
	PECS_CHECK(t, bsize > 0, "FIGETBSZ wrote %d", bsize);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, FS_IOC_FIEMAP, (unsigned long)&v), EOPNOTSUPP);
	/* Freezing needs CAP_SYS_ADMIN; past it the perf filesystem cannot freeze, and
	 * thawing one that is not frozen is EINVAL. */
	int freeze = pecs_ioctl(t, fd, FIFREEZE, 0), thaw = pecs_ioctl(t, fd, FITHAW, 0);
	if (freeze == -EPERM || !pecs_host(t)->privileged) {
		PECS_CHECK_ERR(t, freeze, EPERM, "FIFREEZE without CAP_SYS_ADMIN");
		PECS_CHECK_ERR(t, thaw, EPERM, "FITHAW without CAP_SYS_ADMIN");
	} else {
		PECS_CHECK_ERR(t, freeze, EOPNOTSUPP, "FIFREEZE");
		PECS_CHECK_ERR(t, thaw, EINVAL, "FITHAW");
	}
	/* the rest still reach perf_ioctl(), which knows none of them */
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, FIOQSIZE, (unsigned long)&v), ENOTTY);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, FIONREAD, (unsigned long)&v), ENOTTY);
	/* non-blocking changes nothing a read of a counter does */
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, FIONBIO, (unsigned long)&off), "FIONBIO off");
	PECS_CHECK_EQ(t, pecs_read(t, fd, &v, sizeof(v)), (ssize_t)sizeof(v));
}

/* Pinned to its own CPU, the thread never runs on another: an event for it bound to that
 * other CPU is enabled (its task runs) but never running, so it counts nothing. The same
 * event bound to the thread's own CPU counts, as one with cpu -1 does.
 *
 * The thread pins itself to the CPU it is on: narrowing the mask to another CPU makes
 * sched_setaffinity() wait for the stopper thread there (affine_move_task), and on a VM
 * whose other vCPU is busy with interrupts that wait was seen to last 20 to 110 s. */
PECS_CASE("Required.Read.Times.TaskEventOnAnotherCpuNeverRuns", "counting",
	  "READ-TIMES-CPU-BOUND-TASK")
{
	cpu_set_t saved;
	int n = pecs_host(t)->ncpus;
	const uint64_t rf = PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING;
	uint64_t other[3], own[3];

	if (n < 2)
		PECS_ENV_SKIP(t, "one CPU: no other CPU to bind the event to");
	pecs_keep_affinity(t, &saved);
	int cpu = sched_getcpu();
	if (cpu < 0 || cpu >= n || !CPU_ISSET(cpu, &saved))
		PECS_ENV_SKIP(t, "sched_getcpu gave %d, not an allowed CPU below %d", cpu, n);
	if (pecs_pin_self(cpu))
		PECS_ENV_SKIP(t, "cannot pin this thread to CPU %d", cpu);
	int elsewhere = cpu == 0 ? 1 : 0;

	struct pecs_attr a;
	pecs_cnt_attr(t, &a, PECS_SW_TASK_CLOCK, rf);
	int fd_other = PECS_OPEN(t, &a, 0, elsewhere, -1, 0);
	int fd_own = PECS_OPEN(t, &a, 0, cpu, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd_other, PECS_IOC_ENABLE, 0));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd_own, PECS_IOC_ENABLE, 0));
	pecs_burn_user(2000000);
	PECS_CHECK_EQ(t, pecs_read(t, fd_other, other, sizeof(other)), (ssize_t)sizeof(other));
	PECS_CHECK_EQ(t, pecs_read(t, fd_own, own, sizeof(own)), (ssize_t)sizeof(own));
	PECS_CHECK(t, own[0] > 0 && own[2] > 0, "bound to its own CPU %d: value %llu running %llu",
		   cpu, (unsigned long long)own[0], (unsigned long long)own[2]);
	PECS_CHECK(t, other[1] > 0, "bound to CPU %d: time_enabled advances with the task",
		   elsewhere);
	PECS_CHECK_EQ(t, other[2], 0ull, "bound to CPU %d: never running", elsewhere);
	PECS_CHECK_EQ(t, other[0], 0ull, "bound to CPU %d: nothing counted", elsewhere);
}

/* do_pollfd(): an fd that is not open is reported in revents, whatever was asked, and
 * counts as a ready fd; poll() itself does not fail. */
PECS_CASE("Required.Poll.Closed.FdIsPollnval", "poll", "POLL-CLOSED-NVAL")
{
	struct pecs_attr a;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	int fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	int open_rev = pecs_poll(t, fd, POLLIN, 0);
	PECS_CHECK(t, open_rev >= 0 && !(open_rev & POLLNVAL), "open: revents %s",
		   pecs_retname(open_rev));
	PECS_CHECK_OK(t, pecs_close(t, fd));
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), POLLNVAL, "closed");
	PECS_CHECK_EQ(t, pecs_poll(t, fd, 0, 0), POLLNVAL, "closed, no events asked");
}
