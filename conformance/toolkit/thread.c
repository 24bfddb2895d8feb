#define _GNU_SOURCE
#include "pecs/toolkit/thread.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pecs/case.h"

/* Longer than any case waits for the thread, short enough not to disturb the next. */
#define SPIN_LIMIT_NS 5000000000ull

static void *spin(void *arg)
{
	struct pecs_spinner *s = arg;
	uint64_t end = pecs_clock_ns(CLOCK_MONOTONIC) + SPIN_LIMIT_NS;

	__atomic_store_n(&s->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	/* user-space work only, with a clock check now and then */
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) && pecs_clock_ns(CLOCK_MONOTONIC) < end)
		for (volatile int i = 0; i < 10000; i++)
			;
	return NULL;
}

int pecs_spinner_start(struct pecs_spinner *s)
{
	uint64_t end;
	int err;

	/* before pthread_create, which orders them for the new thread */
	s->stop = 0;
	s->tid = 0;
	s->joined = 0;
	err = pthread_create(&s->th, NULL, spin, s);
	if (err)
		return -err;
	end = pecs_clock_ns(CLOCK_MONOTONIC) + 2000000000ull;
	while (!__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE) &&
	       pecs_clock_ns(CLOCK_MONOTONIC) < end)
		sched_yield();
	if (!__atomic_load_n(&s->tid, __ATOMIC_ACQUIRE)) {
		pecs_spinner_finish(s);
		return -ETIMEDOUT;
	}
	return 0;
}

int pecs_spinner_finish(struct pecs_spinner *s)
{
	char path[64];
	struct stat st;
	uint64_t end;

	if (s->joined)
		return 0;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(s->th, NULL);
	s->joined = 1;
	if (!s->tid)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)s->tid);
	end = pecs_clock_ns(CLOCK_MONOTONIC) + 2000000000ull;
	while (stat(path, &st) == 0) {
		if (pecs_clock_ns(CLOCK_MONOTONIC) >= end)
			return -ETIMEDOUT;
		nanosleep(&(struct timespec){0, 100000}, NULL);
	}
	return 0;
}
