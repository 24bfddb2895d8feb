#define _GNU_SOURCE
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/counting.h" /* the read_format part of a sample */
#include "pecs/toolkit/wait.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

uint64_t pecs_ring_pages_past_mlock_at(struct pecs_t *t, const char *file, int line,
				       uint64_t max_pages, uint64_t *allowed)
{
	const struct pecs_host_facts *h = pecs_host(t);
	uint64_t pages = 1;
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		pecs_end(t, PECS_ENV_SKIP, file, line,
			 "RLIMIT_MEMLOCK is unlimited: no limit to exceed");
	if (h->mlock_kb <= 0 || h->ncpus <= 0 || h->page_size <= 0)
		pecs_end(t, PECS_BROKEN, file, line, "host facts: mlock_kb %d, %d cpus, page %ld",
			 h->mlock_kb, h->ncpus, h->page_size);
	*allowed = (uint64_t)h->mlock_kb * 1024 / (uint64_t)h->page_size * (uint64_t)h->ncpus +
		   rl.rlim_cur / (uint64_t)h->page_size;
	/* the user page is charged too: data pages + 1 must be past the limits */
	while (pages + 1 <= *allowed)
		pages *= 2;
	if (pages > max_pages)
		pecs_end(t, PECS_ENV_SKIP, file, line, "the limits allow %llu pages: a ring past "
			 "them is too large to map here", (unsigned long long)*allowed);
	return pages;
}

int pecs_ring_map(struct pecs_t *t, int fd, unsigned int data_pages, int prot,
		  struct pecs_ring *r)
{
	long page = pecs_host(t)->page_size;
	void *addr;
	int err;

	memset(r, 0, offsetof(struct pecs_ring, bounce));
	r->map_len = (size_t)(1 + data_pages) * (size_t)page;
	err = pecs_mmap(t, fd, r->map_len, prot, MAP_SHARED, 0, &addr);
	if (err < 0)
		return err;
	r->meta = addr;
	r->data = (const uint8_t *)addr + page;
	/* The layout the case expects, not what the page claims: a case checks the
	 * page's data_offset/data_size against these separately. */
	r->data_size = (uint64_t)data_pages * (uint64_t)page;
	r->writable = (prot & PROT_WRITE) != 0;
	return 0;
}

uint64_t pecs_ring_head(const struct pecs_ring *r)
{
	return __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
}

uint64_t pecs_ring_tail_published(const struct pecs_ring *r)
{
	return __atomic_load_n(&r->meta->data_tail, __ATOMIC_RELAXED);
}

/* Copy len bytes starting at free-running offset `from`, across the end if needed. */
static void ring_copy(const struct pecs_ring *r, uint64_t from, void *dst, size_t len)
{
	uint64_t off = from & (r->data_size - 1);
	size_t first = len;

	if (off + len > r->data_size)
		first = (size_t)(r->data_size - off);
	memcpy(dst, r->data + off, first);
	if (first < len)
		memcpy((uint8_t *)dst + first, r->data, len - first);
}

int pecs_ring_next(struct pecs_ring *r, const struct pecs_record_header **rec)
{
	struct pecs_record_header h;
	uint64_t head = pecs_ring_head(r);
	uint64_t avail, off;

	if (head == r->tail)
		return 0;
	avail = head - r->tail;
	/* A head behind us, or further ahead than the buffer holds, means the bytes
	 * under the tail are no longer the records we think they are. */
	if (r->data_size == 0 || avail > r->data_size || avail < sizeof(h))
		return -EBADMSG;
	ring_copy(r, r->tail, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > avail)
		return -EBADMSG;

	off = r->tail & (r->data_size - 1);
	r->last_offset = r->tail;
	r->last_wrapped = off + h.size > r->data_size;
	if (r->last_wrapped) {
		ring_copy(r, r->tail, r->bounce, h.size);
		*rec = (const struct pecs_record_header *)r->bounce;
	} else {
		*rec = (const struct pecs_record_header *)(r->data + off);
	}
	r->tail += h.size;
	return 1;
}

void pecs_ring_consume(struct pecs_ring *r)
{
	if (r->writable)
		__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

int pecs_ring_count(struct pecs_ring *r, uint32_t type)
{
	const struct pecs_record_header *rec;
	uint64_t saved_tail = r->tail, saved_off = r->last_offset;
	int saved_wrapped = r->last_wrapped;
	int n = 0, ret;

	while ((ret = pecs_ring_next(r, &rec)) > 0)
		if (type == 0 || rec->type == type)
			n++;
	r->tail = saved_tail;
	r->last_offset = saved_off;
	r->last_wrapped = saved_wrapped;
	return ret < 0 ? ret : n;
}

int pecs_ring_wait(struct pecs_ring *r, uint32_t type, int want, int limit_ms)
{
	struct pecs_budget b;
	int n;

	pecs_budget_start(&b, (unsigned int)limit_ms);
	for (;;) {
		n = pecs_ring_count(r, type);
		if (n < 0 || n >= want || !pecs_budget_left(&b))
			return n;
		pecs_burn_user(500 * 1000);
	}
}

int pecs_burn_event(struct pecs_t *t, int fd, uint64_t ns, unsigned int limit_ms)
{
	struct pecs_budget b;
	uint64_t start, now;
	int err;

	if ((err = pecs_event_value(t, fd, &start)) < 0)
		return err;
	pecs_budget_start(&b, limit_ms);
	do {
		pecs_burn_user(ns / 8 + 1);
		if ((err = pecs_event_value(t, fd, &now)) < 0)
			return err;
		if (now - start >= ns)
			return 0;
	} while (pecs_budget_left(&b));
	return -ETIMEDOUT;
}

/* ---- samples ------------------------------------------------------------------ */

size_t pecs_sample_size(uint64_t sample_type, uint64_t read_format, unsigned int nr_members,
			uint64_t nr_ips)
{
	/* Every fixed-size field the parser knows is one u64 (TID and CPU pack two u32). */
	static const uint64_t fixed = PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID |
				      PECS_SAMPLE_TIME | PECS_SAMPLE_ADDR | PECS_SAMPLE_ID |
				      PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_CPU |
				      PECS_SAMPLE_PERIOD;
	size_t size = sizeof(struct pecs_record_header) +
		      8 * (size_t)__builtin_popcountll(sample_type & fixed);

	if (sample_type & PECS_SAMPLE_READ)
		size += pecs_cnt_read_size(read_format, nr_members);
	if (sample_type & PECS_SAMPLE_CALLCHAIN)
		size += 8 * (size_t)(1 + nr_ips);
	return size;
}

struct cursor {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t take_u64(struct cursor *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void take_pair(struct cursor *c, uint32_t *lo, uint32_t *hi)
{
	uint64_t v = take_u64(c);

	*lo = (uint32_t)v;
	*hi = (uint32_t)(v >> 32);
}

static void take_read(struct cursor *c, uint64_t rf, struct pecs_parsed_read *rd)
{
	uint64_t i;

	if (rf & PECS_FORMAT_GROUP)
		rd->nr = take_u64(c);
	else
		rd->nr = 1;
	/* The single layout puts the value first; the group layout puts nr first. */
	if (!(rf & PECS_FORMAT_GROUP))
		rd->m[0].value = take_u64(c);
	if (rf & PECS_FORMAT_TOTAL_TIME_ENABLED)
		rd->time_enabled = take_u64(c);
	if (rf & PECS_FORMAT_TOTAL_TIME_RUNNING)
		rd->time_running = take_u64(c);
	if (!(rf & PECS_FORMAT_GROUP)) {
		if (rf & PECS_FORMAT_ID)
			rd->m[0].id = take_u64(c);
		if (rf & PECS_FORMAT_LOST)
			rd->m[0].lost = take_u64(c);
		return;
	}
	if (rd->nr > PECS_PARSED_MEMBERS_MAX) {
		c->bad = 1;
		return;
	}
	for (i = 0; i < rd->nr && !c->bad; i++) {
		rd->m[i].value = take_u64(c);
		if (rf & PECS_FORMAT_ID)
			rd->m[i].id = take_u64(c);
		if (rf & PECS_FORMAT_LOST)
			rd->m[i].lost = take_u64(c);
	}
}

int pecs_parse_sample(const struct pecs_record_header *rec, uint64_t st, uint64_t rf,
		      struct pecs_parsed_sample *s)
{
	struct cursor c = {(const uint8_t *)(rec + 1), (const uint8_t *)rec + rec->size, 0};

	memset(s, 0, sizeof(*s));
	if (st & ~PECS_PARSE_SAMPLE_TYPES)
		return -EOPNOTSUPP;
	if (rec->size < sizeof(*rec))
		return -EBADMSG;
	if (st & PECS_SAMPLE_IDENTIFIER)
		s->identifier = take_u64(&c);
	if (st & PECS_SAMPLE_IP)
		s->ip = take_u64(&c);
	if (st & PECS_SAMPLE_TID)
		take_pair(&c, &s->pid, &s->tid);
	if (st & PECS_SAMPLE_TIME)
		s->time = take_u64(&c);
	if (st & PECS_SAMPLE_ADDR)
		s->addr = take_u64(&c);
	if (st & PECS_SAMPLE_ID)
		s->id = take_u64(&c);
	if (st & PECS_SAMPLE_STREAM_ID)
		s->stream_id = take_u64(&c);
	if (st & PECS_SAMPLE_CPU)
		take_pair(&c, &s->cpu, &s->cpu_res);
	if (st & PECS_SAMPLE_PERIOD)
		s->period = take_u64(&c);
	if (st & PECS_SAMPLE_READ)
		take_read(&c, rf, &s->read);
	if (st & PECS_SAMPLE_CALLCHAIN) {
		s->nr_ips = take_u64(&c);
		if (!c.bad && s->nr_ips > (uint64_t)(c.end - c.p) / 8)
			c.bad = 1;
		if (!c.bad) {
			s->ips = (const uint64_t *)c.p;
			c.p += 8 * s->nr_ips;
		}
	}
	if (c.bad)
		return -EBADMSG;
	s->size = (size_t)(c.p - (const uint8_t *)rec);
	return 0;
}

int pecs_parse_lost(const struct pecs_record_header *rec, uint64_t *id, uint64_t *lost)
{
	struct cursor c = {(const uint8_t *)(rec + 1), (const uint8_t *)rec + rec->size, 0};

	*id = take_u64(&c);
	*lost = take_u64(&c);
	return c.bad ? -EBADMSG : 0;
}

int pecs_ring_lost_ok(const struct pecs_record_header *rec, const uint64_t *ids,
		      unsigned int nr_ids, uint64_t *total)
{
	uint64_t id, lost;

	if (rec->type != PECS_RECORD_LOST || pecs_parse_lost(rec, &id, &lost) < 0 || lost == 0)
		return -EBADMSG;
	for (unsigned int i = 0; i < nr_ids; i++) {
		if (ids[i] == id) {
			*total += lost;
			return 0;
		}
	}
	return nr_ids ? -EBADMSG : 0;
}
