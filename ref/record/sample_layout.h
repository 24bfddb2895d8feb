/* A PERF_RECORD_SAMPLE layout planned once for many samples of one event (a delivery
 * batch), for the reference engine's record encoder (record.h). */
#ifndef REF_RECORD_SAMPLE_LAYOUT_H
#define REF_RECORD_SAMPLE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ref/record/record.h"

/* The * bytes that do not depend on the sample are built once, by ref_record_encode_sample(), and
 * each sample then stores only its own fields (ip, pid/tid, time, addr, cpu, period,
 * the callchain's nr) and copies its ips. The records are byte for byte what
 * ref_record_encode_sample() writes; ref_record_layout_plan() declines (-EOPNOTSUPP)
 * what it cannot lay out so: READ (values change per sample), CODE_PAGE_SIZE (looked
 * up per ip) and any bit it does not know. CGROUP is the desc's, so a caller whose
 * cgroup varies per sample must not plan. A sample takes the layout only when its
 * cpumode is user (0 or PECS_MISC_USER) and it has ips when nr_ips says so
 * (ref_record_layout_fits()). */
#define REF_RECORD_LAYOUT_MAX 256

struct ref_record_layout {
	size_t head;       /* bytes before the callchain's ips (all of them without ips) */
	size_t tail;       /* bytes after the ips */
	uint32_t keep_max; /* ips kept at most (max_stack, the u16 size); 0 without ips */
	/* Offsets of the per-sample fields; 0 when the field is not sampled. */
	uint16_t off_ip, off_tid, off_time, off_addr, off_cpu, off_period, off_nr;
	uint64_t period; /* the desc's, for a sample that brings none */
	uint8_t bytes[REF_RECORD_LAYOUT_MAX]; /* head, then tail */
};

/* 0 and *l filled, -EOPNOTSUPP (not this way) or -EINVAL (a bad desc). */
int ref_record_layout_plan(const struct ref_record_desc *d, struct ref_record_layout *l);

static inline int ref_record_layout_fits(const struct pecs_sample *s)
{
	/* A RAW payload (a tracepoint's) varies per sample: the layout has the empty one;
	 * so do captured registers and stack: the layout has abi 0 and no dump. */
	return s->size == sizeof(*s) && (s->misc == 0 || s->misc == PECS_MISC_USER) &&
	       (s->ips || !s->nr_ips) && !s->raw_size && !s->regs_abi;
}

static inline uint32_t ref_record_layout_keep(const struct ref_record_layout *l,
					      const struct pecs_sample *s)
{
	return s->nr_ips < l->keep_max ? s->nr_ips : l->keep_max;
}

/* The record's size for a sample that fits, with keep = ref_record_layout_keep(). */
static inline size_t ref_record_layout_size(const struct ref_record_layout *l, uint32_t keep)
{
	return l->head + 8 * (size_t)keep + l->tail;
}


static inline void ref_record_layout_put(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Writes the record of `size` bytes (ref_record_layout_size()) at out. Inline: it runs
 * once per sample, and a call was a tenth of the sample's way into the ring. */
static inline void ref_record_layout_encode(const struct ref_record_layout *l,
					    const struct pecs_sample *s, uint32_t keep,
					    size_t size, void *out)
{
	uint8_t *p = out;
	uint16_t size16 = (uint16_t)size;

	/* A head of up to 64 bytes goes as one fixed-size copy when the ips cover what it
	 * writes past the head (they are copied over it below); otherwise word by word:
	 * the head is a few words, and memcpy() of a size known only here is a call. */
	if (l->head <= 64 && l->head + 8 * (size_t)keep >= 64)
		memcpy(p, l->bytes, 64);
	else
		for (size_t i = 0; i < l->head; i += 8)
			memcpy(p + i, l->bytes + i, 8);
	memcpy(p + 6, &size16, sizeof(size16));
	if (l->off_ip)
		ref_record_layout_put(p + l->off_ip, s->nr_ips ? s->ips[0] : 0);
	if (l->off_tid) {
		memcpy(p + l->off_tid, &s->pid, 4);
		memcpy(p + l->off_tid + 4, &s->tid, 4);
	}
	if (l->off_time)
		ref_record_layout_put(p + l->off_time, s->time);
	if (l->off_addr)
		ref_record_layout_put(p + l->off_addr, s->addr);
	if (l->off_cpu)
		memcpy(p + l->off_cpu, &s->cpu, 4); /* the other 4 bytes stay 0 */
	if (l->off_period)
		ref_record_layout_put(p + l->off_period, s->period ? s->period : l->period);
	if (l->off_nr)
		ref_record_layout_put(p + l->off_nr, 1 + (uint64_t)keep);
	if (keep)
		memcpy(p + l->head, s->ips, 8 * (size_t)keep);
	if (l->tail)
		memcpy(p + l->head + 8 * (size_t)keep, l->bytes + l->head, l->tail);
}

#endif /* REF_RECORD_SAMPLE_LAYOUT_H */
