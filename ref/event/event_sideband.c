/* Side-band records about another task: PERF_RECORD_COMM, MMAP2/MMAP, FORK and EXIT, in the
 * layouts kernel/events/core.c writes them (perf_event_comm_output(),
 * perf_event_mmap_output(), perf_event_task_output()), each with the sample_id_all
 * trailer when the event asks for one. The tracer (event_trace.c) says when; this file
 * only decides whether the event wants the record and writes it to its ring. */
#include <stdio.h>
#include <string.h>

#include "ref/event/event.h"
#include "ref/record/record.h"
#include "ref/ring/ring.h"

#define REC_MAX 4608u /* header, fixed fields, PATH_MAX name, trailer */
#define MISC_COMM_EXEC (1u << 13)
#define MISC_MMAP_DATA (1u << 13)
#define RECORD_MMAP2 10u

struct rec {
	uint8_t b[REC_MAX] __attribute__((aligned(8)));
	size_t len;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->b + r->len, p, n);
	r->len += n;
}

static void put_u32(struct rec *r, uint32_t v)
{
	put(r, &v, sizeof(v));
}

static void put_u64(struct rec *r, uint64_t v)
{
	put(r, &v, sizeof(v));
}

/* A name NUL-terminated and padded with zeros to 8 bytes, as the kernel's
 * ALIGN(strlen + 1, sizeof(u64)). */
static void put_name(struct rec *r, const char *s, size_t max)
{
	size_t n = strnlen(s, max - 1);
	size_t padded = (n + 8) & ~(size_t)7;

	memset(r->b + r->len, 0, padded);
	memcpy(r->b + r->len, s, n);
	r->len += padded;
}

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	memset(r->b, 0, 8);
	memcpy(r->b, &type, sizeof(type));
	memcpy(r->b + 4, &misc, sizeof(misc));
	r->len = 8;
}

/* Adds the trailer and writes the record to the event's ring. */
static void finish(struct ref_event *ev, struct rec *r, const struct pecs_sample *src)
{
	struct ref_record_desc d;
	struct lost_cookie cookie = {ev, src};
	ssize_t n;
	uint16_t size;

	if (!ev->rb)
		return;
	ref_event_record_desc(ev, &d);
	n = ref_record_encode_id_trailer(&d, src, r->b + r->len, sizeof(r->b) - r->len);
	if (n < 0)
		return;
	r->len += (size_t)n;
	size = (uint16_t)r->len;
	memcpy(r->b + 6, &size, sizeof(size));
	ev->rb->woke = 0;
	if (ref_ring_write_with(ev->rb->ring, r->b, r->len, &cookie) == 0) {
		pthread_cond_broadcast(&ev->env->wake);
		ref_event_fasync_wrote(ev);
	} else {
		ev->lost++;
	}
}

static int wants(const struct ref_event *ev, uint64_t flag)
{
	return (ev->running || ev->draining) && (ev->attr.flags & flag);
}

void ref_event_sb_comm(struct ref_event *ev, const struct pecs_sample *src, const char *comm,
		       int exec)
{
	struct rec r;

	if (!wants(ev, PECS_ATTR_COMM))
		return;
	begin(&r, PECS_RECORD_COMM, exec ? MISC_COMM_EXEC : 0);
	put_u32(&r, src->pid);
	put_u32(&r, src->tid);
	put_name(&r, comm, 16); /* TASK_COMM_LEN */
	finish(ev, &r, src);
}

/* MMAP2 with attr.mmap2, else the older MMAP; executable mappings only, unless
 * attr.mmap_data asks for the others too (flagged MMAP_DATA). */
void ref_event_sb_mmap(struct ref_event *ev, const struct pecs_sample *src,
		       const struct ref_sb_map *m)
{
	int exec = (m->prot & 0x4) != 0; /* PROT_EXEC */
	struct rec r;

	if (exec ? !wants(ev, PECS_ATTR_MMAP | PECS_ATTR_MMAP2) : !wants(ev, PECS_ATTR_MMAP_DATA))
		return;
	if (ev->attr.flags & PECS_ATTR_MMAP2)
		begin(&r, RECORD_MMAP2, PECS_MISC_USER | (exec ? 0 : MISC_MMAP_DATA));
	else
		begin(&r, PECS_RECORD_MMAP, PECS_MISC_USER | (exec ? 0 : MISC_MMAP_DATA));
	put_u32(&r, src->pid);
	put_u32(&r, src->tid);
	put_u64(&r, m->start);
	put_u64(&r, m->end - m->start);
	put_u64(&r, m->pgoff);
	if (ev->attr.flags & PECS_ATTR_MMAP2) {
		put_u32(&r, m->maj);
		put_u32(&r, m->min);
		put_u64(&r, m->ino);
		put_u64(&r, m->ino_generation);
		put_u32(&r, m->prot);
		put_u32(&r, m->flags);
	}
	put_name(&r, m->name, sizeof(m->name));
	finish(ev, &r, src);
}

/* perf_event_task_output()'s five fields, then the trailer of the task that writes it. */
static void task_record(struct ref_event *ev, const struct pecs_sample *src, uint32_t type,
			const uint32_t ids[4])
{
	struct rec r;

	/* perf_event_task_match() */
	if (!wants(ev, PECS_ATTR_TASK | PECS_ATTR_COMM | PECS_ATTR_MMAP | PECS_ATTR_MMAP2 |
			       PECS_ATTR_MMAP_DATA))
		return;
	begin(&r, type, 0);
	for (int i = 0; i < 4; i++)
		put_u32(&r, ids[i]);
	put_u64(&r, src->time);
	finish(ev, &r, src);
}

/* perf_event_task() for an exit: ppid and ptid both name the real parent's process. */
void ref_event_sb_exit(struct ref_event *ev, const struct pecs_sample *src, uint32_t ppid)
{
	task_record(ev, src, PECS_RECORD_EXIT, (const uint32_t[4]){src->pid, ppid, src->tid, ppid});
}

/* perf_event_task() for a fork, written by the task that made the new one (the trailer
 * is the maker's): ppid and ptid are the maker's process and thread. */
void ref_event_sb_fork(struct ref_event *ev, const struct pecs_sample *src, uint32_t pid,
		       uint32_t tid)
{
	task_record(ev, src, PECS_RECORD_FORK, (const uint32_t[4]){pid, src->pid, tid, src->tid});
}
