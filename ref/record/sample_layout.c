/* A PERF_RECORD_SAMPLE layout planned once for many samples of one event: the bytes
 * that do not depend on the sample come from the encoder itself (record.c), so the
 * two cannot drift apart; only the per-sample fields are stored at their offsets. */
#include <errno.h>
#include <string.h>

#include "ref/record/sample_layout.h"

/* Largest multiple of 8 a u16 header size can hold (as in record.c). */
#define RECORD_SIZE_MAX 65528u

/* Fields before the callchain, in perf_output_sample() order, each one u64. */
static const uint64_t head_fields[] = {
	PECS_SAMPLE_IDENTIFIER, PECS_SAMPLE_IP, PECS_SAMPLE_TID, PECS_SAMPLE_TIME,
	PECS_SAMPLE_ADDR, PECS_SAMPLE_ID, PECS_SAMPLE_STREAM_ID, PECS_SAMPLE_CPU,
	PECS_SAMPLE_PERIOD,
};

/* After the callchain: what the encoder writes the same for every sample, given the
 * desc (CGROUP is the desc's value). */
#define TAIL_FIELDS                                                                       \
	(PECS_SAMPLE_RAW | PECS_SAMPLE_BRANCH_STACK | PECS_SAMPLE_REGS_USER |              \
	 PECS_SAMPLE_STACK_USER | PECS_SAMPLE_WEIGHT | PECS_SAMPLE_WEIGHT_STRUCT |         \
	 PECS_SAMPLE_DATA_SRC | PECS_SAMPLE_TRANSACTION | PECS_SAMPLE_REGS_INTR |          \
	 PECS_SAMPLE_PHYS_ADDR | PECS_SAMPLE_CGROUP | PECS_SAMPLE_DATA_PAGE_SIZE |         \
	 PECS_SAMPLE_AUX)

static uint16_t *offset_of(struct ref_record_layout *l, uint64_t bit)
{
	switch (bit) {
	case PECS_SAMPLE_IP:
		return &l->off_ip;
	case PECS_SAMPLE_TID:
		return &l->off_tid;
	case PECS_SAMPLE_TIME:
		return &l->off_time;
	case PECS_SAMPLE_ADDR:
		return &l->off_addr;
	case PECS_SAMPLE_CPU:
		return &l->off_cpu;
	case PECS_SAMPLE_PERIOD:
		return &l->off_period;
	default:
		return NULL; /* the desc's ids: already in the bytes */
	}
}

int ref_record_layout_plan(const struct ref_record_desc *d, struct ref_record_layout *l)
{
	uint64_t head_mask = PECS_SAMPLE_CALLCHAIN | TAIL_FIELDS;
	static const uint64_t no_ips[1];
	struct pecs_sample s = { .size = sizeof(s), .misc = PECS_MISC_USER, .ips = no_ips };
	struct ref_record_desc dd = { 0 };
	size_t off = 8, i;
	ssize_t n;
	uint64_t st;

	for (i = 0; i < sizeof(head_fields) / sizeof(head_fields[0]); i++)
		head_mask |= head_fields[i];
	memset(l, 0, sizeof(*l));
	dd = *d;
	st = dd.sample_type;
	/* Unknown bits are the encoder's to refuse. */
	if (st & ~head_mask & (PECS_SAMPLE_MAX - 1))
		return -EOPNOTSUPP;
	/* A sample with no ips: IP 0, a callchain of the marker alone, the tail. */
	n = ref_record_encode_sample(d, &s, NULL, l->bytes, sizeof(l->bytes));
	if (n == -ENOSPC)
		return -EOPNOTSUPP;
	if (n < 0)
		return (int)n;
	for (i = 0; i < sizeof(head_fields) / sizeof(head_fields[0]); i++) {
		uint16_t *at;

		if (!(st & head_fields[i]))
			continue;
		at = offset_of(l, head_fields[i]);
		if (at)
			*at = (uint16_t)off;
		off += 8;
	}
	l->period = dd.period;
	if ((st & PECS_SAMPLE_CALLCHAIN) && !dd.exclude_callchain_user) {
		l->off_nr = (uint16_t)off;
		off += 16;
		l->keep_max = (RECORD_SIZE_MAX - (uint32_t)n) / 8;
		/* The kernel stops storing ips at max_stack; 0 is no limit but the u16. */
		if (dd.max_stack && dd.max_stack < l->keep_max)
			l->keep_max = dd.max_stack;
	} else if (st & PECS_SAMPLE_CALLCHAIN) {
		off += 8; /* nr 0: an excluded part has neither marker nor ips */
	}
	l->head = off;
	l->tail = (size_t)n - off;
	return 0;
}
