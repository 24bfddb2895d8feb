/* The signal of an event whose owner is another thread (F_SETOWN_EX F_OWNER_TID).
 *
 * Only the owner thread itself may queue POLL_IN to itself (do_rt_sigqueueinfo(): a
 * si_code >= 0 goes to the sender's own id only), and overflows are delivered on
 * whichever thread the engine runs them. So the siginfo waits in a mailbox, and a relay
 * signal makes the owner queue it to itself from the relay's handler: the owner then
 * takes the event's signal with the siginfo Linux gives, a moment later. The relay is a
 * real-time signal nobody handles, taken from the bottom (the sampler takes its own
 * from the top), once. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "ref/event/event.h"

#define SLOTS 256

enum { FREE, FILLING, READY };

struct slot {
	atomic_int state;
	pid_t tid;
	siginfo_t si;
};

static struct slot slots[SLOTS];
static atomic_int relay_signo;
static pthread_mutex_t pick_lock = PTHREAD_MUTEX_INITIALIZER;

/* On the owner: queue what waits for this thread, to itself. */
static void relay(int signo, siginfo_t *info, void *uc)
{
	pid_t self = getpid(), tid = (pid_t)syscall(SYS_gettid);
	int saved = errno;

	(void)signo;
	(void)info;
	(void)uc;
	for (int i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];

		if (atomic_load_explicit(&s->state, memory_order_acquire) != READY || s->tid != tid)
			continue;
		syscall(SYS_rt_tgsigqueueinfo, self, tid, s->si.si_signo, &s->si);
		atomic_store_explicit(&s->state, FREE, memory_order_release);
	}
	errno = saved;
}

static int pick(void)
{
	int signo = atomic_load(&relay_signo);
	struct sigaction old, sa;

	if (signo)
		return signo;
	pthread_mutex_lock(&pick_lock);
	signo = atomic_load(&relay_signo);
	for (int s = SIGRTMIN + 1; !signo && s < SIGRTMAX; s++) {
		if (sigaction(s, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = relay;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigfillset(&sa.sa_mask);
		if (sigaction(s, &sa, NULL) == 0) {
			signo = s;
			atomic_store(&relay_signo, s);
		}
	}
	pthread_mutex_unlock(&pick_lock);
	return signo;
}

int ref_event_fasync_relay_prepare(void)
{
	return pick() ? 0 : -EAGAIN;
}

int ref_event_fasync_relay(pid_t tid, const siginfo_t *si)
{
	int signo = atomic_load(&relay_signo);

	if (!signo)
		return -1;
	for (int i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];
		int expected = FREE;

		if (!atomic_compare_exchange_strong(&s->state, &expected, FILLING))
			continue;
		s->tid = tid;
		s->si = *si;
		atomic_store_explicit(&s->state, READY, memory_order_release);
		if (syscall(SYS_tgkill, getpid(), tid, signo) == 0)
			return 0;
		atomic_store_explicit(&s->state, FREE, memory_order_release);
		return -1;
	}
	return -1;
}
