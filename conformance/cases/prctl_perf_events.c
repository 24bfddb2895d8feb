/* prctl(PR_TASK_PERF_EVENTS_DISABLE / _ENABLE): every event the calling thread created
 * stops or starts, as IOC_DISABLE / IOC_ENABLE would, wherever it counts; the events other
 * threads created are left alone (kernel/events/core.c perf_event_task_disable and
 * perf_event_task_enable walk current->perf_event_list, which perf_event_open fills).
 * Measured here as root and as uid 65534. An implementation in the suite's process is told
 * of each prctl through its task_event entry, as the interposer tells it of a program's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "pecs/case.h"
#include "pecs/toolkit/wait.h"

#define BURN_NS (20 * 1000000ull)

/* The prctl on this thread, then the implementation told (an implementation without the
 * entry sees the caller's system calls itself, or not at all). 0 or -errno. */
static int perf_events(struct pecs_t *t, int on)
{
	struct pecs_task_event te = {
		.size = sizeof(te),
		.what = on ? PECS_TASK_PERF_EVENTS_ENABLE : PECS_TASK_PERF_EVENTS_DISABLE,
	};
	int r;

	if (prctl(on ? PR_TASK_PERF_EVENTS_ENABLE : PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0))
		return -errno;
	r = pecs_task_event(t, &te);
	return r == -ENOSYS ? 0 : r;
}

struct times {
	uint64_t value, enabled, running;
};

static struct times times_of(struct pecs_t *t, int fd)
{
	uint64_t v[3] = {0};

	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	return (struct times){v[0], v[1], v[2]};
}

static void clock_attr(struct pecs_attr *a, int disabled);

static int open_clock(struct pecs_t *t, int disabled)
{
	struct pecs_attr a;

	clock_attr(&a, disabled);
	return PECS_OPEN(t, &a, 0, -1, -1, 0);
}

/* DISABLE freezes value and both times; ENABLE starts them again, and starts an event
 * opened disabled too (_perf_event_enable). */
PECS_CASE("Required.Prctl.PerfEvents.DisableStopsEnableResumes", "counting,prctl.perf_events",
	  "PRCTL-PERF-EVENTS-TOGGLE")
{
	int on = open_clock(t, 0), off = open_clock(t, 1);
	struct times a, b;

	pecs_burn_user(BURN_NS);
	PECS_CHECK_OK(t, perf_events(t, 0));
	a = times_of(t, on);
	PECS_CHECK(t, a.value > 0, "the enabled event counted nothing before the prctl");
	pecs_burn_user(BURN_NS);
	b = times_of(t, on);
	PECS_CHECK(t, b.value == a.value && b.enabled == a.enabled && b.running == a.running,
		   "after DISABLE: value %llu -> %llu, enabled %llu -> %llu, running %llu -> %llu",
		   (unsigned long long)a.value, (unsigned long long)b.value,
		   (unsigned long long)a.enabled, (unsigned long long)b.enabled,
		   (unsigned long long)a.running, (unsigned long long)b.running);
	PECS_CHECK_EQ(t, times_of(t, off).value, 0);

	PECS_CHECK_OK(t, perf_events(t, 1));
	pecs_burn_user(BURN_NS);
	b = times_of(t, on);
	PECS_CHECK(t, b.value - a.value >= BURN_NS / 2, "after ENABLE the event counted %llu ns "
		   "over a %llu ns burn", (unsigned long long)(b.value - a.value), BURN_NS);
	b = times_of(t, off);
	PECS_CHECK(t, b.value >= BURN_NS / 2 && b.enabled > 0, "the event opened disabled "
		   "counted %llu ns after ENABLE", (unsigned long long)b.value);
}

/* A second thread opens an event counting the main thread. The main thread's prctl leaves
 * it counting; the opener's stops and restarts it. */
struct opener {
	struct pecs_t *t;
	struct pecs_attr attr;
	pid_t target;
	int fd, cmd, err; /* cmd: 0 DISABLE, 1 ENABLE, -1 end */
	sem_t ask, done;
};

static void clock_attr(struct pecs_attr *a, int disabled)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PECS_TYPE_SOFTWARE;
	a->config = PECS_SW_TASK_CLOCK;
	a->read_format = PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING;
	a->flags = PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV |
		   (disabled ? PECS_ATTR_DISABLED : 0);
}

/* The opener's thread: no case check may end the case from here, so it only reports. */
static void *opener_main(void *arg)
{
	struct opener *o = arg;

	o->fd = pecs_open(o->t, &o->attr, o->target, -1, -1, 0);
	sem_post(&o->done);
	for (;;) {
		sem_wait(&o->ask);
		if (o->cmd < 0)
			return NULL;
		o->err = perf_events(o->t, o->cmd);
		sem_post(&o->done);
	}
}

static int opener_says(struct opener *o, int cmd)
{
	o->cmd = cmd;
	sem_post(&o->ask);
	sem_wait(&o->done);
	return o->err;
}

static void opener_end(struct opener *o, pthread_t th)
{
	o->cmd = -1;
	sem_post(&o->ask);
	pthread_join(th, NULL);
}

PECS_CASE("Required.Prctl.PerfEvents.OnlyTheCallersOwnEvents",
	  "counting,pid.other,prctl.perf_events", "PRCTL-PERF-EVENTS-OWNER")
{
	struct opener o = {.t = t, .target = gettid()};
	struct times a, b;
	pthread_t th;

	clock_attr(&o.attr, 0);
	sem_init(&o.ask, 0, 0);
	sem_init(&o.done, 0, 0);
	if (pthread_create(&th, NULL, opener_main, &o))
		PECS_BROKEN(t, "pthread_create failed");
	sem_wait(&o.done);
	if (o.fd < 0) {
		opener_end(&o, th);
		PECS_FAIL(t, "a second thread opening a task clock on the first: %s",
			  pecs_retname(o.fd));
	}
	/* The main thread's own prctl: not its event. */
	pecs_burn_user(BURN_NS);
	int err = perf_events(t, 0);
	a = times_of(t, o.fd);
	pecs_burn_user(BURN_NS);
	b = times_of(t, o.fd);
	perf_events(t, 1);
	if (err) {
		opener_end(&o, th);
		PECS_FAIL(t, "prctl DISABLE: %s", pecs_retname(err));
	}
	if (b.value - a.value < BURN_NS / 2) {
		opener_end(&o, th);
		PECS_FAIL(t, "the other thread's event counted %llu ns over a %llu ns burn after "
			  "this thread's DISABLE", (unsigned long long)(b.value - a.value), BURN_NS);
	}
	/* The opener's prctl stops it where it counts, on this thread. */
	err = opener_says(&o, 0);
	a = times_of(t, o.fd);
	pecs_burn_user(BURN_NS);
	b = times_of(t, o.fd);
	int err2 = opener_says(&o, 1);
	struct times c0 = times_of(t, o.fd);
	pecs_burn_user(BURN_NS);
	struct times c1 = times_of(t, o.fd);
	opener_end(&o, th);
	PECS_CHECK_OK(t, err, "the opener's DISABLE");
	PECS_CHECK_OK(t, err2, "the opener's ENABLE");
	PECS_CHECK(t, b.value == a.value && b.enabled == a.enabled,
		   "after the opener's DISABLE: value %llu -> %llu, enabled %llu -> %llu",
		   (unsigned long long)a.value, (unsigned long long)b.value,
		   (unsigned long long)a.enabled, (unsigned long long)b.enabled);
	PECS_CHECK(t, c1.value - c0.value >= BURN_NS / 2, "after the opener's ENABLE the event "
		   "counted %llu ns over a %llu ns burn", (unsigned long long)(c1.value - c0.value),
		   BURN_NS);
}
