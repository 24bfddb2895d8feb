/* Asynchronous notification: fcntl(2)'s O_ASYNC, owner and signal on an event, and the
 * signal its overflows send, as fs/fcntl.c and kernel/events/core.c do for a perf file.
 *
 * Linux signals from the kernel with whatever siginfo it likes; user space may queue a
 * POLL_IN or SI_KERNEL siginfo (si_code >= 0) only to the calling thread's own id
 * (do_rt_sigqueueinfo). A process owner that is this process is reached that way, with
 * the thread's id standing for the process (the signal is then the process's, as
 * rt_sigqueueinfo() makes it); another thread of this process through a relay that has
 * it queue the siginfo to itself (event_fasync_relay.c). Another process takes an
 * SI_SIGIO siginfo (si_code < 0 may be queued anywhere); otherwise it, and a process
 * group, get the signal without its siginfo (kill, tkill): the wake-up reaches them,
 * the si_code does not. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "ref/event/event.h"
#include "ref/uaccess/uaccess.h"

/* The flags F_SETFL may change (fs/fcntl.c SETFL_MASK). */
#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME | O_ASYNC)
#define NSIG_KERNEL 64 /* _NSIG: valid_signal() takes 0.._NSIG */
#define CAP_FOWNER_BIT 3 /* <linux/capability.h> CAP_FOWNER */

/* A task (thread or process) with that id. */
static int pid_exists(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0;
}

/* A group with a member in it: kill(2)'s probe finds one, even one it may not signal. */
static int pgrp_exists(pid_t pgrp)
{
	return kill(-pgrp, 0) == 0 || errno == EPERM;
}

/* find_vpid(): the number names a task or a process group. */
static int pid_known(pid_t pid)
{
	return pid_exists(pid) || pgrp_exists(pid);
}

/* /proc/N/status's Tgid: N names a process (its leader), not only a thread. */
static int is_process(pid_t pid)
{
	char path[40], buf[512];
	FILE *f;
	int tgid = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid == pid;
}

/* f_getown()'s pid_task(owner, type): a task of that kind is there now. */
static int owner_alive(const struct ref_fasync *fa)
{
	if (!fa->owner)
		return 0;
	switch (fa->owner_type) {
	case F_OWNER_TID:
		return pid_exists(fa->owner);
	case F_OWNER_PID:
		return is_process(fa->owner);
	default:
		return pgrp_exists(fa->owner);
	}
}

static int set_owner(struct ref_fasync *fa, int type, pid_t pid)
{
	if (pid && !pid_known(pid))
		return -ESRCH;
	fa->owner_type = type;
	fa->owner = pid;
	return 0;
}

static int setown(struct ref_fasync *fa, unsigned long arg)
{
	int who = (int)arg;

	if (who == INT_MIN)
		return -EINVAL;
	return who < 0 ? set_owner(fa, F_OWNER_PGRP, -who) : set_owner(fa, F_OWNER_PID, who);
}

static int setown_ex(struct ref_fasync *fa, unsigned long arg)
{
	struct f_owner_ex ex;
	int err = ref_uaccess_copy_from_user(&ex, (const void *)arg, sizeof(ex));

	if (err)
		return err;
	if (ex.type != F_OWNER_TID && ex.type != F_OWNER_PID && ex.type != F_OWNER_PGRP)
		return -EINVAL;
	err = set_owner(fa, ex.type, ex.pid);
	/* Another thread's signals go through the relay, made ready now, not at an
	 * overflow (without it they arrive bare). */
	if (!err && ex.type == F_OWNER_TID && ex.pid)
		ref_event_fasync_relay_prepare();
	return err;
}

/* f_getown(): 0 once the owner is gone; a group as its negative id. */
static int getown(const struct ref_fasync *fa)
{
	if (!owner_alive(fa))
		return 0;
	return fa->owner_type == F_OWNER_PGRP ? -fa->owner : fa->owner;
}

static int getown_ex(const struct ref_fasync *fa, unsigned long arg)
{
	struct f_owner_ex ex = {.type = fa->owner_type};

	ex.pid = owner_alive(fa) ? fa->owner : 0;
	return ref_uaccess_copy_to_user((void *)arg, &ex, sizeof(ex));
}

/* setfl(): O_NOATIME is for the inode's owner, root for perf's anonymous inode, or
 * CAP_FOWNER; a perf file cannot do O_DIRECT; O_ASYNC joins the fasync list under the fd
 * it was set through, which is what si_fd then says. */
static int setfl(struct ref_event *ev, unsigned long arg, int sig_fd)
{
	struct ref_fasync *fa = &ev->fasync;
	const struct ref_policy *p = &ev->env->policy;
	unsigned int fl = (unsigned int)arg;

	if ((fl & O_NOATIME) && !(fa->flags & O_NOATIME) && p->uid != 0 &&
	    !(p->caps & REF_CAP_MASK(CAP_FOWNER_BIT)))
		return -EPERM;
	if (fl & O_DIRECT)
		return -EINVAL;
	if ((fl & O_ASYNC) && !(fa->flags & O_ASYNC))
		fa->fd = sig_fd;
	fa->flags = fl & SETFL_MASK;
	return 0;
}

int ref_event_fcntl(struct ref_event *ev, int cmd, unsigned long arg, int sig_fd)
{
	struct ref_fasync *fa = &ev->fasync;
	int sig = (int)arg;

	switch (cmd) {
	case F_GETFL:
		return O_RDWR | (int)fa->flags;
	case F_SETFL:
		return setfl(ev, arg, sig_fd);
	case F_GETOWN:
		return getown(fa);
	case F_SETOWN:
		return setown(fa, arg);
	case F_GETOWN_EX:
		return getown_ex(fa, arg);
	case F_SETOWN_EX:
		return setown_ex(fa, arg);
	case F_GETSIG:
		return fa->signum;
	case F_SETSIG:
		if (sig < 0 || sig > NSIG_KERNEL)
			return -EINVAL;
		fa->signum = sig;
		return 0;
	default:
		return -EINVAL;
	}
}

int ref_event_fasync_armed(const struct ref_event *ev)
{
	return ev->fd >= 0 && (ev->fasync.flags & O_ASYNC) && ev->fasync.owner;
}

/* kernel/signal.c sig_specific_sicodes(): these signals' si_codes mean their own
 * things, so send_sigio_to_task() says SI_SIGIO instead of POLL_*. */
static int sig_specific(int sig)
{
	return sig == SIGILL || sig == SIGFPE || sig == SIGSEGV || sig == SIGBUS ||
	       sig == SIGTRAP || sig == SIGCHLD || sig == SIGSYS;
}

/* Queues si to the owner, or, where user space may not write that siginfo, the bare
 * signal (see the top of the file). */
static int queue(const struct ref_fasync *fa, siginfo_t *si)
{
	pid_t self = getpid(), tid = (pid_t)syscall(SYS_gettid);
	int sig = si->si_signo;

	switch (fa->owner_type) {
	case F_OWNER_TID:
		if (fa->owner == tid)
			return (int)syscall(SYS_rt_tgsigqueueinfo, self, tid, sig, si);
		if (ref_event_fasync_relay(fa->owner, si) == 0)
			return 0;
		return (int)syscall(SYS_tkill, fa->owner, sig);
	case F_OWNER_PID:
		if (fa->owner == self)
			return (int)syscall(SYS_rt_sigqueueinfo, tid, sig, si);
		/* SI_SIGIO (< 0) may go to another process; POLL_IN and SI_KERNEL may not. */
		if (syscall(SYS_rt_sigqueueinfo, fa->owner, sig, si) == 0)
			return 0;
		if (errno != EPERM)
			return -1;
		return kill(fa->owner, sig);
	default:
		return kill(-fa->owner, sig);
	}
}

void ref_event_fasync_signal(struct ref_event *ev, int reason)
{
	const struct ref_fasync *fa = &ev->fasync;
	siginfo_t si;
	int saved = errno;

	if (!ref_event_fasync_armed(ev))
		return;
	memset(&si, 0, sizeof(si));
	si.si_signo = fa->signum;
	if (fa->signum) {
		si.si_code = fa->signum != SIGIO && sig_specific(fa->signum) ? SI_SIGIO : reason;
		/* band_table[] through mangle_poll(): POLL_IN is readable data, POLL_HUP a
		 * hang-up with an error. */
		si.si_band = reason == POLL_HUP ? POLLHUP | POLLERR : POLLIN | POLLRDNORM;
		si.si_fd = fa->fd;
		/* A real-time queue that is full falls back to the plain SIGIO. */
		if (queue(fa, &si) == 0 || errno != EAGAIN) {
			errno = saved;
			return;
		}
		memset(&si, 0, sizeof(si));
	}
	si.si_signo = SIGIO;
	si.si_code = SI_KERNEL; /* SEND_SIG_PRIV: no band, no fd */
	queue(fa, &si);
	errno = saved;
}

void ref_event_fasync_ring_woke(void *rb)
{
	((struct ref_rb *)rb)->woke = 1;
}

void ref_event_fasync_wrote(struct ref_event *ev)
{
	if (ev->rb && ev->rb->woke)
		ref_event_fasync_signal(ev, POLL_IN);
}
