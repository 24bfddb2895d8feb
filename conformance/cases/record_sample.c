/* PERF_RECORD_SAMPLE from live TASK_CLOCK samples of this thread, for several
 * sample_type sets: field order and size (perf_output_sample() in kernel/events/core.c),
 * and the values Linux puts there (measured here). Each case burns CPU until it has
 * SAMPLES samples or a second passes, then walks every record. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/cpu.h"
#include "pecs/toolkit/ring.h"

#define PERIOD_NS PECS_SAMPLER_PERIOD_NS /* the samplers' */
#define SAMPLES 8

struct walk {
	uint64_t st, rf;
	unsigned int nr_members;
	uint64_t ids[2];  /* IOC_ID of the sampling event, and of its group partner */
	uint64_t last_time, last_value, last_enabled;
	uint32_t cpu;  /* the CPU the thread is pinned to, for check_pinned_cpu */
	int n;
};

typedef void (*check_fn)(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s);

/* Enable (the whole group when `group`), collect, disable, then check every record:
 * the invariants every sample shares here, then `check`. The wait counted SAMPLES
 * samples before the walk, so they are all there; a LOST record between them (a reader
 * that fell behind) is allowed when it is well formed and names one of the events. */
static void run_walk(struct pecs_t *t, int fd, int enable_fd, int group, struct walk *w,
		     check_fn check)
{
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_ring r;
	unsigned int nr_ids = w->ids[1] ? 2 : w->ids[0] ? 1 : 0;
	uint64_t lost = 0;
	int ret;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	const unsigned long flags = group ? PECS_IOC_FLAG_GROUP : 0;

	PECS_CHECK_OK(t, pecs_ioctl(t, enable_fd, PECS_IOC_ENABLE, flags));
	ret = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, SAMPLES, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, enable_fd, PECS_IOC_DISABLE, flags));
	PECS_CHECK(t, ret >= SAMPLES, "%d samples in a second of burning", ret);
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type == PECS_RECORD_LOST) {
			PECS_CHECK(t, pecs_ring_lost_ok(rec, w->ids, nr_ids, &lost) == 0,
				   "a malformed LOST record after sample %d (size %u)", w->n,
				   rec->size);
			continue;
		}
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_EQ(t, rec->misc, PECS_MISC_USER);
		ret = pecs_parse_sample(rec, w->st, w->rf, &s);
		PECS_CHECK(t, ret == 0, "sample %d does not parse (%s), size %u", w->n,
			   pecs_retname(ret), rec->size);
		PECS_CHECK_EQ(t, rec->size, s.size);
		PECS_CHECK_EQ(t, rec->size,
			      pecs_sample_size(w->st, w->rf, w->nr_members, s.nr_ips));
		if (w->st & PECS_SAMPLE_TID) {
			PECS_CHECK_EQ(t, s.pid, getpid());
			PECS_CHECK_EQ(t, s.tid, pecs_gettid());
		}
		if (w->st & PECS_SAMPLE_TIME) {
			PECS_CHECK(t, s.time >= w->last_time, "sample %d: time %llu after %llu",
				   w->n, (unsigned long long)s.time,
				   (unsigned long long)w->last_time);
			w->last_time = s.time;
		}
		check(t, w, &s);
		w->n++;
	}
	PECS_CHECK_OK(t, ret);
}

static void check_ip(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s)
{
	(void)w;
	if (s->ip == 0)
		PECS_FAIL(t, "sample IP is 0");
}

PECS_CASE("Required.Record.Sample.IpTidTime", "mmap,sampling",
	  "REC-SAMPLE-HEADER,REC-SAMPLE-SIZE,REC-SAMPLE-TID,REC-SAMPLE-TIME")
{
	struct walk w = {.st = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME,
			 .nr_members = 1};
	int fd = PECS_SAMPLER(t, .sample_type = w.st);

	run_walk(t, fd, fd, 0, &w, check_ip);
}

static void check_ids(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s)
{
	const struct pecs_host_facts *h = pecs_host(t);

	if (s->identifier != w->ids[0] || s->id != w->ids[0] || s->stream_id != w->ids[0])
		PECS_FAIL(t, "identifier %llu id %llu stream_id %llu, IOC_ID %llu",
			  (unsigned long long)s->identifier, (unsigned long long)s->id,
			  (unsigned long long)s->stream_id, (unsigned long long)w->ids[0]);
	if (s->cpu >= (uint32_t)h->ncpus || s->cpu_res != 0)
		PECS_FAIL(t, "cpu %u (reserved %u) on a host with %d cpus", s->cpu, s->cpu_res,
			  h->ncpus);
	if (s->period != PERIOD_NS)
		PECS_FAIL(t, "period %llu, sample_period %llu", (unsigned long long)s->period,
			  PERIOD_NS);
	check_ip(t, w, s);
}

PECS_CASE("Required.Record.Sample.IdentifierIdStreamCpuPeriod", "mmap,sampling",
	  "REC-SAMPLE-SIZE,REC-SAMPLE-IDS,REC-SAMPLE-CPU,REC-SAMPLE-PERIOD")
{
	struct walk w = {.st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID |
			       PECS_SAMPLE_TIME | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID |
			       PECS_SAMPLE_CPU | PECS_SAMPLE_PERIOD,
			 .nr_members = 1};
	int fd = PECS_SAMPLER(t, .sample_type = w.st);

	PECS_CHECK_OK(t, pecs_event_id(t, fd, &w.ids[0]));
	run_walk(t, fd, fd, 0, &w, check_ids);
}

static void check_pinned_cpu(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s)
{
	if (s->cpu != w->cpu || s->cpu_res != 0)
		PECS_FAIL(t, "sample %d: cpu %u (reserved %u), the thread is pinned to CPU %u",
			  w->n, s->cpu, s->cpu_res, w->cpu);
}

/* CPU is the CPU the task ran on when the sample was taken: pinned, every sample has the
 * same one. The pinned CPU is not 0, so a sample whose cpu was never filled in fails.
 * The thread stays on the CPU it is on when that is not 0: narrowing the mask to another
 * CPU waits for the stopper thread there (see Read.Times.TaskEventOnAnotherCpuNeverRuns);
 * otherwise it moves to the last CPU it may run on. */
PECS_CASE("Required.Record.Sample.CpuIsThePinnedCpu", "mmap,sampling", "REC-SAMPLE-CPU-PINNED")
{
	cpu_set_t saved;
	const int n = pecs_host(t)->ncpus;
	struct walk w = {.st = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CPU,
			 .nr_members = 1};
	int cpu, fd, err;

	if (n < 2)
		PECS_ENV_SKIP(t, "one CPU: a pinned thread's samples would all say CPU 0");
	pecs_keep_affinity(t, &saved);
	cpu = sched_getcpu();
	if (cpu <= 0 || cpu >= n || !CPU_ISSET(cpu, &saved)) {
		for (cpu = n - 1; cpu > 0 && !CPU_ISSET(cpu, &saved); cpu--)
			;
		if (cpu == 0)
			PECS_ENV_SKIP(t, "this thread may run on no CPU but 0 below %d", n);
	}
	if ((err = pecs_pin_self(cpu)))
		PECS_ENV_SKIP(t, "cannot pin this thread to CPU %d: %s", cpu, strerror(err));
	w.cpu = (uint32_t)cpu;
	fd = PECS_SAMPLER(t, .sample_type = w.st);
	run_walk(t, fd, fd, 0, &w, check_pinned_cpu);
}

static int is_context(uint64_t v)
{
	return v >= PECS_CONTEXT_MAX;
}

static void check_callchain(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s)
{
	uint64_t max = (uint64_t)pecs_host(t)->max_stack + 1;

	(void)w;
	if (s->nr_ips < 2 || s->ips[0] != PECS_CONTEXT_USER || s->ips[1] != s->ip)
		PECS_FAIL(t, "callchain nr %llu starts %llx %llx, not USER (%llx) then IP %llx",
			  (unsigned long long)s->nr_ips,
			  (unsigned long long)(s->nr_ips > 0 ? s->ips[0] : 0),
			  (unsigned long long)(s->nr_ips > 1 ? s->ips[1] : 0),
			  (unsigned long long)PECS_CONTEXT_USER, (unsigned long long)s->ip);
	if (s->nr_ips > max)
		PECS_FAIL(t, "callchain nr %llu > max_stack + 1 = %llu",
			  (unsigned long long)s->nr_ips, (unsigned long long)max);
	for (uint64_t i = 1; i < s->nr_ips; i++) {
		if (is_context(s->ips[i]))
			PECS_FAIL(t, "second context marker %llx at %llu in a user-only chain",
				  (unsigned long long)s->ips[i], (unsigned long long)i);
	}
}

PECS_CASE("Required.Record.Sample.CallchainUserContextFirst", "mmap,sampling",
	  "REC-SAMPLE-SIZE,REC-CALLCHAIN-USER,REC-CALLCHAIN-MAX")
{
	struct walk w = {.st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID |
			       PECS_SAMPLE_TIME | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID |
			       PECS_SAMPLE_CPU | PECS_SAMPLE_PERIOD | PECS_SAMPLE_CALLCHAIN,
			 .nr_members = 1};
	int fd = PECS_SAMPLER(t, .sample_type = w.st);

	PECS_CHECK_OK(t, pecs_event_id(t, fd, &w.ids[0]));
	run_walk(t, fd, fd, 0, &w, check_callchain);
}

/* READ in a sample is the event's read() at that moment: its id, a count and enabled
 * time that never go back. */
static void check_read_single(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s)
{
	const struct pecs_parsed_read *rd = &s->read;

	if (rd->m[0].id != w->ids[0])
		PECS_FAIL(t, "read id %llu, IOC_ID %llu", (unsigned long long)rd->m[0].id,
			  (unsigned long long)w->ids[0]);
	if (rd->m[0].value < w->last_value || rd->time_enabled < w->last_enabled ||
	    rd->time_running > rd->time_enabled)
		PECS_FAIL(t, "sample %d: value %llu (was %llu), enabled %llu (was %llu), run %llu",
			  w->n, (unsigned long long)rd->m[0].value,
			  (unsigned long long)w->last_value, (unsigned long long)rd->time_enabled,
			  (unsigned long long)w->last_enabled,
			  (unsigned long long)rd->time_running);
	w->last_value = rd->m[0].value;
	w->last_enabled = rd->time_enabled;
}

PECS_CASE("Required.Record.Sample.ReadWithId", "mmap,sampling", "REC-SAMPLE-SIZE,REC-SAMPLE-READ")
{
	struct walk w = {.st = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |
			       PECS_SAMPLE_READ,
			 .rf = PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING |
			       PECS_FORMAT_ID,
			 .nr_members = 1};
	int fd = PECS_SAMPLER(t, .sample_type = w.st, .read_format = w.rf);

	PECS_CHECK_OK(t, pecs_event_id(t, fd, &w.ids[0]));
	run_walk(t, fd, fd, 0, &w, check_read_single);
	PECS_CHECK(t, w.last_value > 0, "the count in the samples never left 0");
}

static void check_read_group(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s)
{
	const struct pecs_parsed_read *rd = &s->read;

	if (rd->nr != 2 || rd->m[0].id != w->ids[0] || rd->m[1].id != w->ids[1])
		PECS_FAIL(t, "group read nr %llu ids %llu,%llu; expected 2 ids %llu,%llu",
			  (unsigned long long)rd->nr, (unsigned long long)rd->m[0].id,
			  (unsigned long long)rd->m[1].id, (unsigned long long)w->ids[0],
			  (unsigned long long)w->ids[1]);
	if (rd->m[1].value < w->last_value)
		PECS_FAIL(t, "member count went back: %llu after %llu",
			  (unsigned long long)rd->m[1].value, (unsigned long long)w->last_value);
	w->last_value = rd->m[1].value;
}

PECS_CASE("Required.Record.Sample.ReadGroupLeaderFirst",
	  "mmap,sampling,read.group", "REC-SAMPLE-SIZE,REC-SAMPLE-READ-GROUP")
{
	struct walk w = {.st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |
			       PECS_SAMPLE_READ,
			 .rf = PECS_FORMAT_GROUP | PECS_FORMAT_ID | PECS_FORMAT_TOTAL_TIME_ENABLED,
			 .nr_members = 2};
	struct pecs_attr a;
	int leader = PECS_SAMPLER(t, .sample_type = w.st, .read_format = w.rf), member;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = w.rf;
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, leader, &w.ids[0]));
	PECS_CHECK_OK(t, pecs_event_id(t, member, &w.ids[1]));
	run_walk(t, leader, leader, 1, &w, check_read_group);
	PECS_CHECK(t, w.last_value > 0, "the member's count in the samples never left 0");
}

/* Linux writes a group member's own id into its samples (measured). Fuchsia's Starnix
 * snapshot in shared/seed writes the leader's: this case tells them apart. */
PECS_CASE("Required.Record.Sample.GroupMemberCarriesOwnId",
	  "mmap,sampling,read.group", "REC-SAMPLE-MEMBER-ID")
{
	struct walk w = {.st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID |
			       PECS_SAMPLE_TIME | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID |
			       PECS_SAMPLE_CPU | PECS_SAMPLE_PERIOD,
			 .nr_members = 1};
	struct pecs_attr a;
	uint64_t leader_id;
	int leader, member;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	member = PECS_SAMPLER(t, .sample_type = w.st,
			      .flags = PECS_SAMPLER_IN_GROUP, .group_fd = leader);
	PECS_CHECK_OK(t, pecs_event_id(t, leader, &leader_id));
	PECS_CHECK_OK(t, pecs_event_id(t, member, &w.ids[0]));
	PECS_CHECK(t, leader_id != w.ids[0], "leader and member share an id");
	run_walk(t, member, leader, 1, &w, check_ids);
}

static void check_all(struct pecs_t *t, struct walk *w, const struct pecs_parsed_sample *s)
{
	/* A timer sample has no data address. */
	if (s->addr != 0)
		PECS_FAIL(t, "ADDR %llx in a clock sample", (unsigned long long)s->addr);
	check_ids(t, w, s);
	check_callchain(t, w, s);
	check_read_single(t, w, s);
}

PECS_CASE("Required.Record.Sample.AllSoftwareFieldsInOrder", "mmap,sampling",
	  "REC-SAMPLE-SIZE,REC-SAMPLE-ORDER,REC-SAMPLE-ADDR-ZERO")
{
	struct walk w = {.st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID |
			       PECS_SAMPLE_TIME | PECS_SAMPLE_ADDR | PECS_SAMPLE_ID |
			       PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_CPU | PECS_SAMPLE_PERIOD |
			       PECS_SAMPLE_READ | PECS_SAMPLE_CALLCHAIN,
			 .rf = PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING |
			       PECS_FORMAT_ID,
			 .nr_members = 1};
	int fd = PECS_SAMPLER(t, .sample_type = w.st, .read_format = w.rf);

	PECS_CHECK_OK(t, pecs_event_id(t, fd, &w.ids[0]));
	run_walk(t, fd, fd, 0, &w, check_all);
}
