/* The ring lock's contended half (ring_lock.h). */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ref/ring/ring_lock.h"

/* A holder drops the lock within a few records' time unless it holds a batch or was
 * preempted; beyond this many polls the CPU is better given away. */
#define RING_LOCK_SPINS 100

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

static int try_take(struct ring_lock *l)
{
	return !__atomic_load_n(&l->word, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE);
}

void ref_ring_lock_wait(struct ring_lock *l)
{
	/* Bounds the wait of a taker whose wake was missed (ring_lock_drop()): 1 ms. */
	const struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000000 };
	int i;

	for (i = 0; i < RING_LOCK_SPINS; i++) {
		cpu_relax();
		if (try_take(l))
			return;
	}
	/* Counted before the exchange that decides to sleep (a full barrier), so a holder
	 * that drops the lock after that exchange sees the count and wakes a sleeper. */
	__atomic_fetch_add(&l->sleepers, 1, __ATOMIC_SEQ_CST);
	while (__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 1, &nap, NULL, 0);
	__atomic_fetch_sub(&l->sleepers, 1, __ATOMIC_RELAXED);
}

void ref_ring_lock_wake(struct ring_lock *l)
{
	syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
