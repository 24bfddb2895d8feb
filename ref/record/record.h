/* The reference engine's record encoder: the bytes a Linux 6.12 kernel writes for
 * PERF_RECORD_SAMPLE, PERF_RECORD_LOST and read(2), built from a decoded sample.
 *
 * Every function returns a byte count or a negative errno and never writes past `cap`.
 * Sizes are always multiples of 8, as the kernel's are, so a record never leaves the ring
 * misaligned.
 *
 * Changes against the brief's interface (additions only, every original name kept):
 *  - ref_record_id_trailer_size()/ref_record_encode_id_trailer(): the sample_id_all
 *    trailer on its own, for any non-sample record the engine emits.
 *  - ref_record_callchain_room(): how many ips the encoder will keep, so callers can
 *    learn about trimming without encoding.
 *  - struct ref_record_desc grew period, code_page_size, cgroup and the two
 *    exclude_callchain flags (appended).
 *
 * A sample's IP is ips[0] (0 when nr_ips is 0); its callchain is the context marker for
 * its cpumode followed by ips[], as perf_callchain() builds it for a user sample.
 */
#ifndef REF_RECORD_H
#define REF_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/abi.h"
#include "pecs/sample.h"

/* One counter of a read(2) result: the leader first, then siblings in creation order. */
struct ref_read_member {
	uint64_t value, id, lost;
};

struct ref_read_values {
	uint64_t time_enabled, time_running;
	uint32_t nr; /* members; only 1 is used without PECS_FORMAT_GROUP */
	const struct ref_read_member *members;
};

/* What an event contributes to each of its records. Built by the engine that links
 * this encoder, so it carries no size: fields are added, not versioned. */
struct ref_record_desc {
	uint64_t sample_type, read_format;
	int sample_id_all;
	uint64_t id;        /* primary id (the parent's when inherited): ID, IDENTIFIER, LOST */
	uint64_t stream_id; /* STREAM_ID: differs from id only for inherited events */
	uint32_t max_stack; /* attr.sample_max_stack as open resolved it; 0: no limit but u16 */
	uint64_t period;         /* PERIOD when the sample's own period is 0 */
	uint64_t code_page_size; /* CODE_PAGE_SIZE; 0 = unknown, as the kernel says for ip 0 */
	uint64_t cgroup;         /* CGROUP id; 0 = none */
	/* attr.exclude_callchain_user/_kernel: when the sample's part of the stack is
	 * excluded the kernel writes an empty callchain, nr 0 and no marker (measured). */
	int exclude_callchain_user;
	int exclude_callchain_kernel;
	/* attr.sample_regs_user/_intr and sample_stack_user: which registers REGS_USER and
	 * REGS_INTR write of a sample that has them (pecs_sample.regs_abi), and the stack
	 * bytes STACK_USER asks for. */
	uint64_t regs_user, regs_intr;
	uint32_t stack_user;
};


/* Bytes read(2) returns for this read_format with nr counters (nr=1 without GROUP). */
size_t ref_record_read_size(uint64_t read_format, uint32_t nr);

/* Writes the read(2) layout; -ENOSPC when cap is short, -EINVAL for nr 0 or a
 * non-GROUP layout asked for more than one counter. */
ssize_t ref_record_read_encode(uint64_t read_format, const struct ref_read_values *v, void *out,
			       size_t cap);

/* Total bytes of the PERF_RECORD_SAMPLE for this sample, after callchain trimming.
 * rv may be NULL unless sample_type has PECS_SAMPLE_READ. */
ssize_t ref_record_sample_size(const struct ref_record_desc *d, const struct pecs_sample *s,
			       const struct ref_read_values *rv);

/* Encodes PERF_RECORD_SAMPLE: header, then fields in perf_output_sample order.
 * -ENOSPC when cap is short; -E2BIG when even a record without callchain entries
 * would not fit the u16 size; -EINVAL for a bad desc or sample. */
ssize_t ref_record_encode_sample(const struct ref_record_desc *d, const struct pecs_sample *s,
				 const struct ref_read_values *rv, void *out, size_t cap);

/* A sample checked and measured once, to be encoded later (ref_record_encode_planned):
 * the engine needs the size to reserve ring space before the encoder writes there, and
 * checking the desc and the sample twice per record was a fifth of the per-sample
 * path. It points at the caller's desc, sample, ips and rv (copying only an older
 * version's sample, which crosses the seam), which must outlive the encode. */
struct ref_record_plan {
	const struct ref_record_desc *d; /* the caller's */
	const struct pecs_sample *s;     /* the caller's, or scopy for an older version */
	struct pecs_sample scopy;
	const struct ref_read_values *rv;
	size_t size, fixed;
	uint32_t keep;
	uint32_t ustack; /* STACK_USER's dump size (0: the field is the u64 0 alone) */
};

/* Fills *plan; the record's size, or what ref_record_sample_size() returns on error. */
ssize_t ref_record_plan_sample(const struct ref_record_desc *d, const struct pecs_sample *s,
			       const struct ref_read_values *rv, struct ref_record_plan *plan);
/* Encodes a planned sample; -ENOSPC when cap is short. */
ssize_t ref_record_encode_planned(const struct ref_record_plan *plan, void *out, size_t cap);

/* Encodes PERF_RECORD_LOST {id, lost} plus the sample_id_all trailer, whose pid, tid,
 * time and cpu come from trailer_src (the record that found space, as in the kernel);
 * trailer_src may be NULL, which writes zeros there. */
ssize_t ref_record_encode_lost(const struct ref_record_desc *d, uint64_t lost,
			       const struct pecs_sample *trailer_src, void *out, size_t cap);

/* The sample_id_all trailer: 0 bytes when sample_id_all is off. */
size_t ref_record_id_trailer_size(const struct ref_record_desc *d);
ssize_t ref_record_encode_id_trailer(const struct ref_record_desc *d,
				     const struct pecs_sample *src, void *out, size_t cap);

/* How many of nr_ips the encoder keeps (the marker is extra). A sample's ips are one
 * part of the stack, user or kernel by its cpumode; the kernel's two-part chains of
 * kernel-mode samples ([KERNEL, ...], [USER, ...]) are not modelled. */
uint32_t ref_record_callchain_room(const struct ref_record_desc *d, const struct pecs_sample *s,
				   const struct ref_read_values *rv);

#endif /* REF_RECORD_H */
