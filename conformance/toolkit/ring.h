/* Reading an event's mmap ring from a case, the way a profiler does.
 *
 * The reader follows the published protocol: load-acquire data_head, read the records
 * between our tail and it, then store-release data_tail (writable mappings only). A
 * record that runs past the end of the data area is copied into a bounce buffer, so a
 * caller always sees one contiguous record. Nothing here trusts the implementation:
 * every size is checked against the ring before it is used.
 */
#ifndef PECS_TOOLKIT_RING_H
#define PECS_TOOLKIT_RING_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/case.h"
#include "pecs/toolkit/event.h" /* the ring cases open samplers and ask their ids */

struct pecs_ring {
	struct pecs_mmap_page *meta;
	const uint8_t *data;
	uint64_t data_size;
	uint64_t tail;         /* where the next record starts, as a free-running offset */
	size_t map_len;
	int writable;
	uint64_t last_offset;  /* free-running offset of the record last returned */
	int last_wrapped;      /* that record ran past the end of the data area */
	uint8_t bounce[65536] __attribute__((aligned(8))); /* header.size is a u16 */
};

/* Map fd with 1 + data_pages pages (data_pages a power of two, or 0) and fill r.
 * prot is PROT_READ (overwrite mode) or PROT_READ|PROT_WRITE. 0 or -errno. */
int pecs_ring_map(struct pecs_t *t, int fd, unsigned int data_pages, int prot,
		  struct pecs_ring *r);

/* The data pages (a power of two) of the smallest ring that the locked-memory limits do
 * not cover: perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK, as an unprivileged mmap is
 * charged. *allowed gets what the limits allow. Ends the case, at the caller's line, as
 * ENV_SKIP when RLIMIT_MEMLOCK is unlimited or that ring would be over max_pages, and as
 * BROKEN when the host facts cannot size it. */
#define pecs_ring_pages_past_mlock(t, max_pages, allowed) \
	pecs_ring_pages_past_mlock_at((t), __FILE__, __LINE__, (max_pages), (allowed))
uint64_t pecs_ring_pages_past_mlock_at(struct pecs_t *t, const char *file, int line,
				       uint64_t max_pages, uint64_t *allowed);

/* data_head, loaded with acquire so the record bytes before it are visible. */
uint64_t pecs_ring_head(const struct pecs_ring *r);
/* data_tail as the mapping shows it. */
uint64_t pecs_ring_tail_published(const struct pecs_ring *r);

/* The next record after r->tail, copied whole into the bounce buffer when it wraps.
 * Returns 1 and sets *rec, 0 when the reader has caught up with data_head, or
 * -EBADMSG when the bytes cannot be a record (size < 8, not 8-aligned, past head). */
int pecs_ring_next(struct pecs_ring *r, const struct pecs_record_header **rec);

/* Publish r->tail as data_tail (release), letting the writer reuse the space. */
void pecs_ring_consume(struct pecs_ring *r);

/* Count records of `type` between r->tail and data_head without consuming them
 * (type 0 counts every record). -EBADMSG on a malformed ring. */
int pecs_ring_count(struct pecs_ring *r, uint32_t type);

/* Burn this thread's CPU in short slices until the ring holds at least `want` records
 * of `type`, or until limit_ms of wall time and limit_ms of this thread's CPU time have
 * both passed (wait.h): a starved thread waits longer instead of giving up.
 * Returns the count seen (may be < want). */
int pecs_ring_wait(struct pecs_ring *r, uint32_t type, int want, int limit_ms);

/* Burn this thread's CPU in user space until the value of fd (a TASK_CLOCK or CPU_CLOCK
 * event on this thread, non-group read_format) has grown by ns, or a budget of limit_ms
 * (wait.h) is spent. The event's own clock is what its samples follow; the
 * thread's CPU clock can run far ahead of it (ptrace). 0, -ETIMEDOUT, or -errno. */
int pecs_burn_event(struct pecs_t *t, int fd, uint64_t ns, unsigned int limit_ms);

/* ---- PERF_RECORD_SAMPLE ---------------------------------------------------------- */

#define PECS_PARSED_MEMBERS_MAX 16

struct pecs_parsed_read {
	uint64_t nr; /* 1 for a non-group read_format */
	uint64_t time_enabled, time_running;
	struct {
		uint64_t value, id, lost;
	} m[PECS_PARSED_MEMBERS_MAX];
};

struct pecs_parsed_sample {
	uint64_t identifier, ip;
	uint32_t pid, tid;
	uint64_t time, addr, id, stream_id;
	uint32_t cpu, cpu_res;
	uint64_t period;
	struct pecs_parsed_read read;
	uint64_t nr_ips;
	const uint64_t *ips; /* points into the record */
	size_t size;         /* bytes the fields took, header included */
};

/* sample_type bits this parser understands; others give -EOPNOTSUPP. */
#define PECS_PARSE_SAMPLE_TYPES                                                          \
	(PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |   \
	 PECS_SAMPLE_ADDR | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_CPU |    \
	 PECS_SAMPLE_PERIOD | PECS_SAMPLE_READ | PECS_SAMPLE_CALLCHAIN)

/* Decode rec's fields in the kernel's order. 0, -EOPNOTSUPP for an unknown bit,
 * -EBADMSG when the fields run past header.size. s->size may be < header.size: the
 * caller decides whether trailing bytes are an error. */
int pecs_parse_sample(const struct pecs_record_header *rec, uint64_t sample_type,
		      uint64_t read_format, struct pecs_parsed_sample *s);

/* The size a sample must have, from the sample_type/read_format arithmetic alone
 * (independent of the parser): header + fixed fields + read (pecs_cnt_read_size() of
 * counting.h) + callchain. */
size_t pecs_sample_size(uint64_t sample_type, uint64_t read_format, unsigned int nr_members,
			uint64_t nr_ips);

/* PERF_RECORD_LOST body: {u64 id; u64 lost}. 0 or -EBADMSG. */
int pecs_parse_lost(const struct pecs_record_header *rec, uint64_t *id, uint64_t *lost);

/* A PERF_RECORD_LOST met while walking a ring. Linux writes one whenever the ring had no
 * room for a record (a reader that fell behind on a loaded or traced host), so a walk
 * must accept it as the ABI allows: well formed, at least one record lost, from one of
 * the nr_ids ids given (any id when nr_ids is 0). Adds the count to *total.
 * 0, or -EBADMSG when the record is none of that. */
int pecs_ring_lost_ok(const struct pecs_record_header *rec, const uint64_t *ids,
		      unsigned int nr_ids, uint64_t *total);

#endif /* PECS_TOOLKIT_RING_H */
