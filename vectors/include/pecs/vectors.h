/* pecs golden vectors as C arrays.
 *
 * The arrays are generated from the JSON files under vectors/ by harness/pecs_vectors/to_c.py
 * (Bazel: //vectors:c). Each entry carries its tcId, so a failing case can name the exact
 * vector. Every array has a matching _count; an area with no vectors has count 0.
 * See docs/vectors.md for the meaning of each field.
 */
#ifndef PECS_VECTORS_H
#define PECS_VECTORS_H

#include <stddef.h>
#include <stdint.h>

/* ---- read_format: what read() returns for each read_format ---------------------- */

struct pecs_vec_field {
	const char *name; /* value, time_enabled, ..., or nr, member[i].value, ... */
	uint32_t offset;
	uint32_t size;
};

struct pecs_vec_read_format {
	int tc_id;
	const char *comment;
	uint64_t read_format;
	uint32_t nr_members; /* 1 for a read without PERF_FORMAT_GROUP */
	uint32_t size;
	const struct pecs_vec_field *fields;
	uint32_t nr_fields;
};

extern const struct pecs_vec_read_format pecs_vec_read_formats[];
extern const size_t pecs_vec_read_formats_count;

/* ---- mmap_page: struct perf_event_mmap_page ----------------------------------- */

struct pecs_vec_layout {
	int tc_id;
	const char *name;
	uint32_t offset;
	uint32_t size;
};

extern const struct pecs_vec_layout pecs_vec_mmap_page[];
extern const size_t pecs_vec_mmap_page_count;

/* The bits of perf_event_mmap_page.capabilities. */
struct pecs_vec_bit {
	int tc_id;
	const char *name;
	uint32_t bit;
};

extern const struct pecs_vec_bit pecs_vec_mmap_caps[];
extern const size_t pecs_vec_mmap_caps_count;

/* ---- open: perf_event_attr size versions -------------------------------------- */

struct pecs_vec_attr_size {
	int tc_id;
	const char *name; /* PERF_ATTR_SIZE_VERn */
	uint32_t size;
};

extern const struct pecs_vec_attr_size pecs_vec_attr_sizes[];
extern const size_t pecs_vec_attr_sizes_count;

/* ---- ioctl: PERF_EVENT_IOC_* request numbers (x86-64 encoding) ----------------- */

struct pecs_vec_ioctl {
	int tc_id;
	const char *name;
	unsigned long request;
};

extern const struct pecs_vec_ioctl pecs_vec_ioctls[];
extern const size_t pecs_vec_ioctls_count;

/* ---- record_layout: PERF_RECORD_SAMPLE bytes ---------------------------------- */

/* Bytes of an expected record that are only known at run time. `field` is one of:
 * "id" (patch with the sampling event's PERF_EVENT_IOC_ID), "member_id[i]" (member i of
 * the group, 0 = leader), and, to be skipped rather than compared, "value",
 * "member_value[i]", "time_enabled", "time_running", "cgroup", "code_page_size".
 * Checkers should skip any field name they do not know. */
struct pecs_vec_dynamic {
	uint32_t offset;
	uint32_t size;
	const char *field;
};

struct pecs_vec_record {
	int tc_id;
	const char *comment;
	uint64_t sample_type, read_format;
	uint32_t nr_members; /* events in the group when read_format has GROUP, else 1 */
	uint32_t pid, tid, cpu;
	uint64_t time, period, addr;
	const uint64_t *ips; /* ips[0] is the sampled IP */
	uint32_t nr_ips;
	const uint8_t *expected; /* the whole record, header included */
	uint32_t expected_len;
	const struct pecs_vec_dynamic *dynamic;
	uint32_t nr_dynamic;
};

extern const struct pecs_vec_record pecs_vec_records[];
extern const size_t pecs_vec_records_count;

/* ---- fxt, markup: profiler streams to samples and ring bytes ------------------- */

struct pecs_vec_koid {
	uint64_t koid;
	uint32_t linux_id;
};

struct pecs_vec_stream_sample {
	uint32_t pid, tid;
	uint64_t time;
	const uint64_t *ips;
	uint32_t nr_ips;
};

struct pecs_vec_stream {
	int tc_id;
	const char *comment;
	const char *result; /* "valid", "invalid" or "acceptable" */
	const uint8_t *stream;
	uint32_t stream_len;
	int is_text;             /* markup text rather than binary FXT */
	const uint32_t *chunks;  /* chunk sizes to try: one run per entry, reads of that size */
	uint32_t nr_chunks;
	const struct pecs_vec_koid *koids;
	uint32_t nr_koids;
	uint64_t sample_type, read_format, sample_period;
	const uint64_t *ids;
	uint32_t nr_ids;
	const struct pecs_vec_stream_sample *samples;
	uint32_t nr_samples;
	const uint8_t *ring;     /* expected ring bytes when has_ring */
	uint32_t ring_len;
	int has_ring;
	const struct pecs_vec_dynamic *dynamic; /* ranges of ring, as for records */
	uint32_t nr_dynamic;
	const char *error_code;  /* NULL when the stream must parse without error */
	uint64_t error_offset;
};

extern const struct pecs_vec_stream pecs_vec_fxt[];
extern const size_t pecs_vec_fxt_count;
extern const struct pecs_vec_stream pecs_vec_markup[];
extern const size_t pecs_vec_markup_count;

#endif /* PECS_VECTORS_H */
