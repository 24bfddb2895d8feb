/* poll() on an event fd (perf_poll() in kernel/events/core.c, measured here): no buffer
 * is a hang-up, a mapped ring is readable only after a wakeup, and a wakeup is reported
 * once. */
#include <poll.h>
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS PECS_SAMPLER_PERIOD_NS /* the samplers' */
#define ST (PECS_SAMPLE_IP | PECS_SAMPLE_TID)

PECS_CASE("Required.Poll.NoBuffer.Pollhup", "poll", "POLL-NO-BUFFER-HUP")
{
	int fd = PECS_SAMPLER(t, .sample_type = ST, .wakeup_events = 1), r;

	r = pecs_poll(t, fd, POLLIN, 0);
	PECS_CHECK_OK(t, r);
	PECS_CHECK(t, r & POLLHUP, "revents 0x%x without POLLHUP", r);
}

PECS_CASE("Required.Poll.Mapped.EmptyIsZero", "poll,mmap", "POLL-MAPPED-EMPTY")
{
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = ST, .wakeup_events = 1);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), 0);
}

PECS_CASE("Required.Poll.Wakeup.PollinAfterWakeupEventsOnce",
	  "poll,mmap,sampling", "POLL-WAKEUP-EVENTS,POLL-WAKEUP-ONCE")
{
	const int wakeup = 16;
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = ST, .wakeup_events = (uint32_t)wakeup), n, rev;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	/* Fewer samples than wakeup_events: not readable yet. */
	n = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 1, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	n = pecs_ring_count(&r, PECS_RECORD_SAMPLE);
	PECS_CHECK(t, n >= 1, "no sample");
	if (n < wakeup)
		PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), 0);
	/* Enough for a wakeup: POLLIN, then nothing until the next one. */
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	n = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, wakeup, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, n >= wakeup, "only %d samples", n);
	rev = pecs_poll(t, fd, POLLIN, 100);
	PECS_CHECK_OK(t, rev);
	PECS_CHECK(t, rev & POLLIN, "revents 0x%x after %d samples (wakeup_events %d)", rev, n,
		   wakeup);
	PECS_CHECK_EQ(t, pecs_poll(t, fd, POLLIN, 0), 0);
}

/* The wakeup comes with the wakeup_events-th sample, not the one after. IOC_REFRESH lets
 * exactly that many samples be taken (the event disables itself after them), so a wakeup
 * that came one sample late never comes. The poll waits a little: the verdict is whether
 * the wakeup was earned, not how soon it is seen. */
PECS_CASE("Required.Poll.Wakeup.PollinAtExactlyWakeupEvents",
	  "poll,mmap,sampling,ioctl.refresh", "POLL-WAKEUP-EVENTS-EXACT")
{
	const int wakeup = 2;
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = ST, .wakeup_events = (uint32_t)wakeup), n, rev;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, (unsigned long)wakeup), 0);
	n = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, wakeup, 1000);
	PECS_CHECK(t, n >= wakeup, "only %d of %d samples arrived", n, wakeup);
	pecs_burn_user(20 * PERIOD_NS);
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), wakeup);
	rev = pecs_poll(t, fd, POLLIN, 100);
	PECS_CHECK_OK(t, rev);
	PECS_CHECK(t, rev & POLLIN, "revents 0x%x after exactly %d samples (wakeup_events %d)",
		   rev, wakeup, wakeup);
}
