/* The sample words Linux reads from the sampled task at the overflow: its perf_event
 * cgroup's id (PERF_SAMPLE_CGROUP, perf_prepare_sample() via cgroup_id()) and the size of
 * the page under the ip (PERF_SAMPLE_CODE_PAGE_SIZE, perf_get_page_size()); and the times
 * a group member's PERF_SAMPLE_READ carries. The expected values come from /proc and the
 * cgroup filesystem, read by the suite itself. */
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/host.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define PERIOD_NS 100000ull
#define SAMPLES 8

/* IP, TID, CGROUP, CODE_PAGE_SIZE: one u64 each after the header. */
#define TASK_ST (PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CGROUP | PECS_SAMPLE_CODE_PAGE_SIZE)

PECS_CASE("Required.Record.Sample.CgroupAndCodePageSizeOfTask",
	  "mmap,sampling", "REC-SAMPLE-CGROUP-ID,REC-SAMPLE-CODE-PAGE-SIZE")
{
	const struct pecs_record_header *rec;
	struct pecs_attr a;
	struct pecs_ring r;
	uint64_t cgroup, w[4], id, lost = 0;
	int fd, ret, n = 0;

	ret = pecs_host_cgroup_id(&cgroup);
	if (ret == -ENOENT)
		PECS_ENV_SKIP(t, "no perf_event cgroup controller, or no cgroup mount to name it");
	if (ret < 0)
		PECS_BROKEN(t, "cannot read this process's cgroup: %s", pecs_retname(ret));
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, TASK_ST);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	ret = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, SAMPLES, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, ret >= SAMPLES, "%d samples in a second of burning", ret);
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		uint64_t size, alt;

		/* a reader that fell behind may meet LOST between the samples it waited for */
		if (rec->type == PECS_RECORD_LOST) {
			PECS_CHECK(t, pecs_ring_lost_ok(rec, &id, 1, &lost) == 0,
				   "a malformed LOST record after sample %d", n);
			continue;
		}
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_EQ(t, rec->size, sizeof(*rec) + sizeof(w));
		memcpy(w, rec + 1, sizeof(w));
		PECS_CHECK_EQ(t, w[1], (uint64_t)pecs_gettid() << 32 | (uint32_t)getpid());
		PECS_CHECK(t, w[2] == cgroup, "sample %d: cgroup %llu, this process's is %llu", n,
			   (unsigned long long)w[2], (unsigned long long)cgroup);
		/* The ip was just executed, so its page is present. */
		pecs_host_page_size(w[0], &size, &alt);
		PECS_CHECK(t, size != 0, "sample %d: ip %llx is not in a present page", n,
			   (unsigned long long)w[0]);
		PECS_CHECK(t, w[3] == size || w[3] == alt,
			   "sample %d: code page size %llu at ip %llx, the mapping's is %llu", n,
			   (unsigned long long)w[3], (unsigned long long)w[0],
			   (unsigned long long)size);
		n++;
	}
	PECS_CHECK_OK(t, ret);
}

/* perf_output_read_group() writes the group's values under the sampling event's own
 * enabled and running times; read(2) of the group reports the leader's. A member enabled
 * long after its leader tells the two apart.
 *
 * "Long after" is measured on the leader's own time_enabled, not on a clock of the
 * suite's: on a virtual machine, under ptrace or on a loaded host a task event's time can
 * run well below the thread's CPU clock, and a lead that only the CPU clock saw would
 * not separate the two. The leader runs until its own time_enabled shows the lead, and
 * the member's window must then be shorter than the lead, which it is by construction
 * (a few sample periods against 50 ms). */
PECS_CASE("Required.Record.Sample.GroupMemberReadOwnTimes",
	  "mmap,sampling,read.group", "REC-SAMPLE-READ-GROUP-MEMBER-TIMES")
{
	const uint64_t rf = PECS_FORMAT_GROUP | PECS_FORMAT_TOTAL_TIME_ENABLED |
			    PECS_FORMAT_TOTAL_TIME_RUNNING | PECS_FORMAT_ID;
	const uint64_t st = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_READ;
	const uint64_t lead_ns = 50 * 1000 * 1000ull;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_budget b;
	struct pecs_attr a;
	struct pecs_ring r;
	uint64_t v[7], before, after, member_id, lost = 0, cpu;
	int leader, member, ret, n = 0;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = rf;
	leader = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ioctl(t, leader, PECS_IOC_ENABLE, 0));
	/* Ten times the lead in both clocks before giving up: the task ran that long, so a
	 * leader that still shows less than the lead does not follow its task. */
	cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	pecs_budget_start(&b, (unsigned int)(10 * lead_ns / 1000000));
	do {
		pecs_burn_user(lead_ns / 10);
		PECS_CHECK_EQ(t, pecs_read(t, leader, v, sizeof(v)), 40);
		before = v[1];
	} while (before < lead_ns && pecs_budget_left(&b));
	cpu = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	PECS_CHECK(t, before >= lead_ns, "the leader was enabled for only %llu ns while this "
		   "thread ran for %llu ns", (unsigned long long)before, (unsigned long long)cpu);
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS * 10, st);
	a.read_format = rf;
	member = PECS_OPEN(t, &a, 0, -1, leader, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, member, &member_id));
	PECS_CHECK_OK(t, pecs_ring_map(t, member, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_ENABLE, 0));
	ret = pecs_ring_wait(&r, PECS_RECORD_SAMPLE, 2, 1000);
	PECS_CHECK_OK(t, pecs_ioctl(t, member, PECS_IOC_DISABLE, 0));
	PECS_CHECK(t, ret >= 2, "%d samples in a second of burning", ret);
	PECS_CHECK_EQ(t, pecs_read(t, leader, v, sizeof(v)), 56);
	after = v[1];
	/* The member's window must be shorter than the lead, or the leader's times would
	 * fit under the member's bound too. It is a couple of 1 ms periods of task time
	 * against 50 ms, so this is the host having kept the thread off the CPU with the
	 * member enabled for a second of burning: nothing to conclude about the ABI. */
	if (after - before >= before)
		PECS_ENV_SKIP(t, "the member was enabled for %llu ns, longer than the leader's "
			      "%llu ns lead: the window cannot tell their times apart",
			      (unsigned long long)(after - before), (unsigned long long)before);
	/* The member was enabled only between the two reads of the leader. */
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type == PECS_RECORD_LOST) {
			PECS_CHECK(t, pecs_ring_lost_ok(rec, &member_id, 1, &lost) == 0,
				   "a malformed LOST record after sample %d", n);
			continue;
		}
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_OK(t, pecs_parse_sample(rec, st, rf, &s));
		PECS_CHECK_EQ(t, s.identifier, member_id);
		PECS_CHECK_EQ(t, s.read.nr, 2);
		PECS_CHECK(t, s.read.time_enabled > 0 && s.read.time_enabled <= after - before,
			   "sample %d: time_enabled %llu, the member was enabled for at most %llu "
			   "(the leader for %llu)",
			   n, (unsigned long long)s.read.time_enabled,
			   (unsigned long long)(after - before), (unsigned long long)after);
		PECS_CHECK(t, s.read.time_running <= s.read.time_enabled,
			   "sample %d: time_running %llu > time_enabled %llu", n,
			   (unsigned long long)s.read.time_running,
			   (unsigned long long)s.read.time_enabled);
		n++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, n >= 2, "%d samples in the walk, %llu lost", n, (unsigned long long)lost);
}
