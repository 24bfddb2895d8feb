/* Engine-level cases: exact samples placed through the optional inject_sample entry
 * (feature engine.inject), so the ring's bytes can be predicted to the byte. The kernel
 * has no such entry and reports these UNSUPPORTED; the expected bytes follow Linux's
 * encoding (perf_output_sample(), perf_callchain() in kernel/events), not any engine.
 *
 * An injected sample is treated as one overflow of an enabled event: it is subject to
 * PAUSE_OUTPUT, REFRESH limits and the ring's flow control exactly as a live one.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/vectors.h"
#include "pecs/toolkit/host.h"
#include "pecs/toolkit/coverage.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

/* Long enough that the event's own live profiler, which an implementation may start at
 * ENABLE, takes no sample between ENABLE and the first injection, which mutes it: at
 * 100 us one sometimes did on a busy host and shifted every byte after it. */
#define PERIOD_NS 1000000000ull
#define PID 4242u
#define TID 4243u
#define MAX_IPS 1000

static uint64_t ip_pool[MAX_IPS];

static const uint64_t *ips_for(uint32_t n)
{
	for (uint32_t i = 0; i < n && i < MAX_IPS; i++)
		ip_pool[i] = 0x400000u + 0x10u * i;
	return ip_pool;
}

static void make_sample(struct pecs_sample *s, uint64_t time, uint32_t nr_ips)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->pid = PID;
	s->tid = TID;
	s->time = time;
	s->cpu = 0;
	s->nr_ips = nr_ips;
	s->ips = ips_for(nr_ips);
}

static int open_enabled(struct pecs_t *t, uint64_t st, uint64_t rf, unsigned int data_pages,
			struct pecs_ring *r)
{
	struct pecs_attr a;
	int fd, ret;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, st);
	a.read_format = rf;
	a.flags &= ~PECS_ATTR_SAMPLE_ID_ALL;
	/* User-only chains: 6.12 asks for privilege when a chain may reach the kernel. */
	if (st & PECS_SAMPLE_CALLCHAIN)
		a.flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	fd = pecs_open(t, &a, 0, -1, -1, 0);
	if (fd < 0)
		return fd;
	if ((ret = pecs_ring_map(t, fd, data_pages, PROT_READ | PROT_WRITE, r)) < 0)
		return ret;
	if ((ret = pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0)) < 0)
		return ret;
	return fd;
}

static int inject(struct pecs_t *t, int fd, uint64_t time, uint32_t nr_ips)
{
	struct pecs_sample s;

	make_sample(&s, time, nr_ips);
	return pecs_inject_sample(t, fd, &s);
}

/* ---- IP|TID|TIME|CALLCHAIN records of a chosen size -------------------------------- */

#define CC_ST (PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME | PECS_SAMPLE_CALLCHAIN)

/* header, ip, pid/tid, time, nr, USER marker: 48 bytes, plus 8 per ip. */
static size_t cc_size(uint32_t nr_ips)
{
	return pecs_sample_size(CC_ST, 0, 1, nr_ips + 1);
}

/* The record Linux writes for make_sample(time, nr_ips) under CC_ST. */
static size_t cc_expected(uint8_t *buf, uint64_t time, uint32_t nr_ips)
{
	const uint64_t *ips = ips_for(nr_ips);
	struct pecs_record_header h = {PECS_RECORD_SAMPLE, PECS_MISC_USER,
				       (uint16_t)cc_size(nr_ips)};
	uint64_t *w = (uint64_t *)(buf + sizeof(h));

	memcpy(buf, &h, sizeof(h));
	*w++ = ips[0];
	*w++ = (uint64_t)TID << 32 | PID;
	*w++ = time;
	*w++ = nr_ips + 1;
	*w++ = PECS_CONTEXT_USER;
	for (uint32_t i = 0; i < nr_ips; i++)
		*w++ = ips[i];
	return h.size;
}

/* Inject fillers until the next record starts at free-running offset `target`, reading
 * back and consuming each so the writer always has room. */
static void fill_to(struct pecs_t *t, int fd, struct pecs_ring *r, uint64_t target,
		    uint32_t kmax)
{
	const size_t min = cc_size(1), max = cc_size(kmax);
	const struct pecs_record_header *rec;
	uint64_t time = 1000;

	while (r->tail < target) {
		size_t rem = (size_t)(target - r->tail), want;

		if (rem <= max)
			want = rem;
		else if (rem - max >= min)
			want = max;
		else
			want = rem - min;
		PECS_CHECK(t, want >= min, "cannot fill %zu bytes with %zu-byte records", rem, min);
		PECS_CHECK_OK(t, inject(t, fd, time++, (uint32_t)((want - cc_size(0)) / 8)));
		PECS_CHECK_EQ(t, pecs_ring_next(r, &rec), 1);
		PECS_CHECK_EQ(t, rec->size, want);
		pecs_ring_consume(r);
	}
}

PECS_CASE("Required.Engine.Ring.WrapStraddlesEndByteExact",
	  "engine.inject,mmap", "RING-WRAP,ENG-WRAP-EXACT")
{
	static const uint32_t straddle[] = {8, 16, 24};
	const uint32_t k = 6; /* a 104-byte record */
	uint32_t kmax = pecs_host(t)->max_stack < 100 ? (uint32_t)pecs_host(t)->max_stack : 100;
	uint8_t want[2048];

	for (size_t i = 0; i < sizeof(straddle) / sizeof(straddle[0]); i++) {
		const struct pecs_record_header *rec;
		struct pecs_ring r;
		size_t size = cc_size(k);
		int fd = open_enabled(t, CC_ST, 0, 1, &r);

		PECS_CHECK_OK(t, fd);
		fill_to(t, fd, &r, r.data_size - (size - straddle[i]), kmax);
		PECS_CHECK_OK(t, inject(t, fd, 77777, k));
		PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
		PECS_CHECK(t, r.last_wrapped, "the record did not reach the end of the area");
		PECS_CHECK_EQ(t, (r.last_offset % r.data_size) + rec->size - r.data_size,
			      straddle[i]);
		PECS_CHECK_EQ(t, cc_expected(want, 77777, k), rec->size);
		PECS_CHECK_MEM(t, (const uint8_t *)rec, want, size);
		PECS_CHECK_EQ(t, pecs_ring_head(&r), r.data_size + straddle[i]);
	}
}

PECS_CASE("Required.Engine.Ring.FullWritableLostCountExact",
	  "engine.inject,mmap", "RING-WRITABLE-FILL,RING-LOST-RECORD,ENG-LOST-EXACT")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	const uint64_t rf = pecs_claims(t, "read.lost") ? PECS_FORMAT_ID | PECS_FORMAT_LOST : 0;
	const size_t size = pecs_sample_size(st, 0, 1, 0);
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	uint64_t id, lost_id, lost, cap, v[3];
	int fd = open_enabled(t, st, rf, 1, &r);

	PECS_CHECK_OK(t, fd);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	/* The writer leaves 8 bytes free: head may never catch up with tail. */
	cap = (r.data_size - 8) / size;
	for (uint64_t i = 0; i < cap + 7; i++)
		(void)inject(t, fd, 1000 + i, 1);
	PECS_CHECK_EQ(t, pecs_ring_head(&r), cap * size);
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), cap);
	if (rf) {
		PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
		PECS_CHECK_EQ(t, v[2], 7);
	}
	while (pecs_ring_next(&r, &rec) > 0)
		;
	pecs_ring_consume(&r);
	PECS_CHECK_OK(t, inject(t, fd, 5000, 1));
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_LOST);
	PECS_CHECK_EQ(t, rec->misc, 0);
	PECS_CHECK_EQ(t, rec->size, 24);
	PECS_CHECK_OK(t, pecs_parse_lost(rec, &lost_id, &lost));
	PECS_CHECK_EQ(t, lost_id, id);
	PECS_CHECK_EQ(t, lost, 7);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 0);
}

/* Like every fd call of the perf ABI, an injection names an open event or is EBADF:
 * one into a closed event's fd (the implementation may reuse the number later, not
 * while the case holds it closed) is refused, one into the open event lands. */
PECS_CASE("Required.Engine.Inject.ClosedFdEbadf", "engine.inject,mmap", "ENG-INJECT-EBADF")
{
	struct pecs_ring r;
	int fd = open_enabled(t, PECS_SAMPLE_IP | PECS_SAMPLE_TID, 0, 1, &r);
	struct pecs_attr a;

	PECS_CHECK_OK(t, fd);
	PECS_CHECK_OK(t, inject(t, fd, 1000, 1), "an open event");
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	int gone = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_close(t, gone));
	PECS_CHECK_ERR(t, inject(t, gone, 2000, 1), EBADF, "a closed fd");
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), 1);
}

/* A callchain whose length is given without its addresses is a caller's mistake the
 * engine must refuse before it writes anything, not one it reads through NULL. */
PECS_CASE("Required.Engine.Inject.IpsMissingEinval", "engine.inject,mmap",
	  "ENG-INJECT-IPS-MISSING")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN;
	struct pecs_ring r;
	struct pecs_sample s;
	int fd = open_enabled(t, st, 0, 1, &r);

	PECS_CHECK_OK(t, fd);
	make_sample(&s, 1000, 3);
	s.ips = NULL;
	PECS_CHECK_ERR(t, pecs_inject_sample(t, fd, &s), EINVAL, "3 ips, no array");
	PECS_CHECK_EQ(t, pecs_ring_head(&r), 0);
	make_sample(&s, 2000, 3);
	PECS_CHECK_OK(t, pecs_inject_sample(t, fd, &s), "the same sample with its ips");
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), 1);
}

PECS_CASE("Required.Engine.PauseOutput.NothingWrittenThenExactLost",
	  "engine.inject,ioctl.pause_output,mmap",
	  "IOC-PAUSE-NO-WRITES,IOC-PAUSE-LOST-ON-RESUME,ENG-PAUSE-EXACT")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	const struct pecs_record_header *rec;
	struct pecs_ring r;
	uint64_t id, lost_id, lost, head;
	int fd = open_enabled(t, st, 0, 1, &r);

	PECS_CHECK_OK(t, fd);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, inject(t, fd, 1, 1));
	PECS_CHECK_OK(t, inject(t, fd, 2, 1));
	head = pecs_ring_head(&r);
	PECS_CHECK_EQ(t, head, 2 * pecs_sample_size(st, 0, 1, 0));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 1), 0);
	for (int i = 0; i < 5; i++)
		(void)inject(t, fd, 10 + (uint64_t)i, 1);
	PECS_CHECK_EQ(t, pecs_ring_head(&r), head);
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_PAUSE_OUTPUT, 0), 0);
	PECS_CHECK_OK(t, inject(t, fd, 20, 1));
	PECS_CHECK_EQ(t, pecs_ring_count(&r, 0), 4);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_LOST);
	PECS_CHECK_OK(t, pecs_parse_lost(rec, &lost_id, &lost));
	PECS_CHECK_EQ(t, lost_id, id);
	PECS_CHECK_EQ(t, lost, 5);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
}

PECS_CASE("Required.Engine.Refresh.ExactlyNRecordsThenDisabled",
	  "engine.inject,ioctl.refresh,mmap", "IOC-REFRESH-N-OVERFLOWS,ENG-REFRESH-EXACT")
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	const int n = 3;
	struct pecs_attr a;
	struct pecs_ring r;
	uint64_t v[2], te; /* value, time_enabled */
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, st);
	a.read_format = PECS_FORMAT_TOTAL_TIME_ENABLED;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, fd, PECS_IOC_REFRESH, (unsigned long)n), 0);
	for (int i = 0; i < n; i++)
		PECS_CHECK_OK(t, inject(t, fd, 100 + (uint64_t)i, 1));
	for (int i = 0; i < 3; i++)
		(void)inject(t, fd, 200 + (uint64_t)i, 1);
	PECS_CHECK_EQ(t, pecs_ring_count(&r, PECS_RECORD_SAMPLE), n);
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	te = v[1];
	pecs_burn_user(1000 * 1000);
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
	PECS_CHECK(t, v[1] == te, "time_enabled moved from %llu to %llu: still enabled",
		   (unsigned long long)te, (unsigned long long)v[1]);
}

/* Linux keeps max_stack user entries (the sample_max_stack attr, else the sysctl) after
 * the one context marker; the u16 record size must still hold. */
static void check_trimmed(struct pecs_t *t, uint16_t attr_max, uint32_t expect_entries)
{
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_attr a;
	struct pecs_ring r;
	const uint64_t *ips;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, st);
	a.sample_max_stack = attr_max;
	a.flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 4, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	PECS_CHECK_OK(t, inject(t, fd, 1, MAX_IPS));
	ips = ips_for(MAX_IPS);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1);
	PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
	PECS_CHECK_OK(t, pecs_parse_sample(rec, st, 0, &s));
	PECS_CHECK_EQ(t, s.size, rec->size);
	PECS_CHECK_EQ(t, rec->size, pecs_sample_size(st, 0, 1, expect_entries + 1));
	PECS_CHECK_EQ(t, s.nr_ips, expect_entries + 1);
	PECS_CHECK_EQ(t, s.ips[0], PECS_CONTEXT_USER);
	PECS_CHECK_MEM(t, &s.ips[1], ips, expect_entries * sizeof(uint64_t));
	PECS_CHECK_EQ(t, s.ip, ips[0]);
}

PECS_CASE("Required.Engine.Callchain.OversizedTrimmedToMaxStack",
	  "engine.inject,mmap", "REC-CALLCHAIN-MAX,ENG-CALLCHAIN-TRIM")
{
	int max = pecs_host(t)->max_stack;

	if (max <= 0 || max >= MAX_IPS)
		PECS_BROKEN(t, "max_stack %d: 1000 ips would not be trimmed", max);
	check_trimmed(t, 0, (uint32_t)max);
}

PECS_CASE("Required.Engine.Callchain.SampleMaxStackAttrTrims",
	  "engine.inject,mmap", "REC-CALLCHAIN-MAX,ENG-CALLCHAIN-TRIM")
{
	if (pecs_host(t)->max_stack < 10)
		PECS_ENV_SKIP(t, "max_stack %d is below the 10 this case asks for",
			      pecs_host(t)->max_stack);
	check_trimmed(t, 10, 10);
}

/* ---- record layout vectors ------------------------------------------------------ */

/* The host's word for a task-dependent field, as Linux would write it for this process
 * (the injected sample stands for an overflow of this thread). */
static void host_word(const struct pecs_vec_record *v, const char *field, const uint8_t *got,
		      uint64_t *word)
{
	uint64_t size, alt;

	if (!strcmp(field, "cgroup")) {
		/* No perf_event controller: Linux would refuse CGROUP; the id is then 0. */
		if (pecs_host_cgroup_id(word) < 0)
			*word = 0;
		return;
	}
	pecs_host_page_size(v->nr_ips ? v->ips[0] : 0, &size, &alt);
	memcpy(word, got, sizeof(*word));
	/* Either size user space cannot tell apart (see pecs_host_page_size()). */
	if (*word != alt)
		*word = size;
}

/* Patch the run-time ranges of `want`: ids from the events, the task-dependent words
 * from the host, the rest (values and times) from `got`. */
static int patch_dynamic(const struct pecs_vec_record *v, uint8_t *want, const uint8_t *got,
			 const uint64_t *ids)
{
	for (uint32_t i = 0; i < v->nr_dynamic; i++) {
		const struct pecs_vec_dynamic *d = &v->dynamic[i];
		unsigned int m;
		uint64_t word;

		if (d->offset + d->size > v->expected_len)
			return -EBADMSG;
		if (!strcmp(d->field, "id") && d->size == 8) {
			memcpy(want + d->offset, &ids[0], 8);
		} else if (sscanf(d->field, "member_id[%u]", &m) == 1 && m < v->nr_members &&
			   d->size == 8) {
			memcpy(want + d->offset, &ids[m], 8);
		} else if ((!strcmp(d->field, "cgroup") || !strcmp(d->field, "code_page_size")) &&
			   d->size == 8) {
			host_word(v, d->field, got + d->offset, &word);
			memcpy(want + d->offset, &word, 8);
		} else { /* values and times are not compared */
			memcpy(want + d->offset, got + d->offset, d->size);
		}
	}
	return 0;
}

#define VEC_MEMBERS_MAX 8

/* Opens the vector's group (leader sampling, members counting), maps and enables it;
 * fds[] and ids[] get each member's fd and IOC_ID. */
static void open_vector_group(struct pecs_t *t, const struct pecs_vec_record *v, int *fds,
			      uint64_t *ids, struct pecs_ring *r)
{
	struct pecs_attr a;

	for (uint32_t m = 0; m < v->nr_members; m++) {
		if (m == 0) {
			/* The vector's period travels in the sample (s.period below); the
			 * event's own is long, for the reason PERIOD_NS gives. */
			pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS, v->sample_type);
		} else {
			pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
		}
		a.read_format = v->read_format;
		if (v->sample_type & PECS_SAMPLE_CALLCHAIN)
			a.flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
		fds[m] = PECS_CHECK_OK(t, pecs_open(t, &a, 0, -1, m ? fds[0] : -1, 0),
				       "tcId %d (%s): open of event %u", v->tc_id, v->comment, m);
		PECS_CHECK_OK(t, pecs_event_id(t, fds[m], &ids[m]), "tcId %d (%s): IOC_ID of event %u",
			      v->tc_id, v->comment, m);
	}
	PECS_CHECK_OK(t, pecs_ring_map(t, fds[0], 4, PROT_READ | PROT_WRITE, r), "tcId %d: mmap",
		      v->tc_id);
	PECS_CHECK_OK(t, pecs_ioctl(t, fds[0], PECS_IOC_ENABLE, PECS_IOC_FLAG_GROUP),
		      "tcId %d: enable", v->tc_id);
}

/* One vector: the ring must hold exactly its bytes. */
static void check_vector(struct pecs_t *t, const struct pecs_vec_record *v)
{
	static uint8_t want[65536];
	const struct pecs_record_header *rec;
	uint64_t ids[VEC_MEMBERS_MAX];
	struct pecs_sample s;
	struct pecs_ring r;
	int fds[VEC_MEMBERS_MAX];

	if (v->nr_members == 0 || v->nr_members > VEC_MEMBERS_MAX ||
	    v->expected_len > sizeof(want))
		PECS_BROKEN(t, "tcId %d: %u members, %u bytes", v->tc_id, v->nr_members,
			    v->expected_len);
	open_vector_group(t, v, fds, ids, &r);
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.pid = v->pid;
	s.tid = v->tid;
	s.time = v->time;
	s.cpu = v->cpu;
	s.period = v->period;
	s.addr = v->addr;
	s.ips = v->ips;
	s.nr_ips = v->nr_ips;
	PECS_CHECK_OK(t, pecs_inject_sample(t, fds[0], &s), "tcId %d (%s)", v->tc_id, v->comment);
	PECS_CHECK_EQ(t, pecs_ring_next(&r, &rec), 1, "tcId %d (%s): no record", v->tc_id,
		      v->comment);
	PECS_CHECK_EQ(t, rec->size, v->expected_len, "tcId %d (%s)", v->tc_id, v->comment);
	memcpy(want, v->expected, v->expected_len);
	if (patch_dynamic(v, want, (const uint8_t *)rec, ids) < 0)
		PECS_BROKEN(t, "tcId %d: dynamic range outside the record", v->tc_id);
	PECS_CHECK_MEM(t, rec, want, v->expected_len, "tcId %d (%s)", v->tc_id, v->comment);
	/* Release this vector's events before the next one. */
	pecs_munmap(t, r.meta, r.map_len);
	for (uint32_t m = v->nr_members; m-- > 0;)
		pecs_close(t, fds[m]);
}

/* The sample_type bits no record_layout vector sets, and why: each needs hardware or a
 * buffer the injection seam does not carry. Any other bit below PECS_SAMPLE_MAX must be
 * in some vector, so a bit added to the ABI turns this case BROKEN until it has one. */
static const struct {
	uint64_t bit;
	const char *why;
} no_vector[] = {
	{PECS_SAMPLE_BRANCH_STACK, "a PMU's LBR; software events refuse it"},
	{PECS_SAMPLE_REGS_USER, "register sets are per architecture; open_pmu_caps covers the attr"},
	{PECS_SAMPLE_STACK_USER, "a copy of the live user stack, not a value a sample injects"},
	{PECS_SAMPLE_REGS_INTR, "register sets are per architecture; open_pmu_caps covers the attr"},
	{PECS_SAMPLE_AUX, "an AUX area, which software events have none of"},
};

static uint64_t sample_bits_covered(void)
{
	uint64_t covered = 0;

	for (size_t i = 0; i < pecs_vec_records_count; i++)
		covered |= pecs_vec_records[i].sample_type;
	for (size_t i = 0; i < sizeof(no_vector) / sizeof(no_vector[0]); i++)
		covered |= no_vector[i].bit;
	return covered;
}

PECS_CASE("Required.Engine.Record.LayoutVectorsByteExact",
	  "engine.inject,mmap", "REC-SAMPLE-ORDER,REC-SAMPLE-SIZE,ENG-RECORD-VECTORS")
{
	/* Groups are part of read.group (as in the other group cases): without it, the
	 * group vectors are left out rather than failed. PHYS_ADDR needs privilege to open
	 * (perf_allow_kernel), so an unprivileged run leaves those vectors out too. */
	int groups = pecs_claims(t, "read.group"), priv = pecs_host(t)->privileged, n = 0;

	PECS_CHECK(t, pecs_vec_records_count > 0, "no record_layout vectors");
	pecs_cover_bits(t, "the record_layout vectors", sample_bits_covered(), PECS_SAMPLE_MAX);
	for (size_t i = 0; i < pecs_vec_records_count; i++) {
		if (pecs_vec_records[i].nr_members > 1 && !groups)
			continue;
		if ((pecs_vec_records[i].sample_type & PECS_SAMPLE_PHYS_ADDR) && !priv)
			continue;
		check_vector(t, &pecs_vec_records[i]);
		n++;
	}
	PECS_CHECK(t, n > 0, "every vector was left out");
}
