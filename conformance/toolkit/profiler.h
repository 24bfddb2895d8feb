/* Driving a scripted profiler stream through an implementation's set_profiler entry
 * (feature profiler.replay) and comparing the ring it leaves with expected bytes.
 *
 * One replay is one whole event life: open a disabled user-only TASK_CLOCK sampling
 * event, map its ring, install the stream, ENABLE, DISABLE, copy out what the ring
 * holds, unmap and close. The ring is sized from the bytes the caller expects, so the
 * records never wrap and can be compared as one span.
 */
#ifndef PECS_TOOLKIT_PROFILER_H
#define PECS_TOOLKIT_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/case.h"
#include "pecs/vectors.h"

/* What to replay and how to configure the event it feeds. */
struct pecs_replay {
	uint64_t sample_type, read_format;
	uint64_t period;           /* ns; 0 takes 1 ms */
	enum pecs_stream_format format;
	const uint8_t *data;
	size_t len;
	size_t chunk;              /* bytes per read; 0 = the whole stream in one read */
	const struct pecs_koid_map_entry *koids;
	size_t nr_koids;
	size_t expect_len;         /* ring bytes the caller expects: sizes the mapping */
};

/* What the ring held after DISABLE. */
struct pecs_replay_out {
	uint8_t *ring;             /* the caller's buffer, filled with data[0..head) */
	size_t cap;
	uint64_t head;             /* data_head after DISABLE */
	uint64_t id;               /* PERF_EVENT_IOC_ID of the event, 0 when unavailable */
	const char *step;          /* on failure: the call that failed */
};

/* Run one replay. 0 when every call succeeded (the ring may still be wrong: compare
 * it); -ENOSYS when the implementation has no set_profiler entry; else the failing
 * call's -errno with out->step naming it. -ENOSPC when head exceeds out->cap or the
 * data area. */
int pecs_replay_run(struct pecs_t *t, const struct pecs_replay *r, struct pecs_replay_out *out);

/* A replay of vector v: its stream, koid map, sample_type, read_format and period, with
 * the given format (the vector's own when PECS_STREAM_FXT/MARKUP is not forced by the
 * caller: pass -1) and chunk. */
void pecs_replay_from_vector(struct pecs_replay *r, const struct pecs_vec_stream *v,
			     int format, size_t chunk, struct pecs_koid_map_entry *koid_buf,
			     size_t koid_cap);

/* The vtable's stream for vector v as FXT, served chunk bytes per read, with its koid map
 * copied into koid_buf (at most koid_cap entries): for cases that open the events
 * themselves instead of using pecs_replay_run. */
void pecs_stream_from_vector(struct pecs_profiler_stream *st, const struct pecs_vec_stream *v,
			     size_t chunk, struct pecs_koid_map_entry *koid_buf, size_t koid_cap);

/* Compare a ring against v's expected bytes, patching the fields v marks as dynamic
 * ("id" with the event's id) and skipping the run-time ones. 0 on a match, else -1 with
 * a message naming the tcId, the chunk and the first difference. */
int pecs_replay_check_vector(const struct pecs_vec_stream *v, const struct pecs_replay_out *out,
			     size_t chunk, char *msg, size_t msglen);

/* Where ring a and ring b first differ, as text naming the record index (both taken
 * as a sequence of perf records). For failure messages. */
const char *pecs_replay_diff(const uint8_t *got, size_t got_len, const uint8_t *want,
			     size_t want_len, char *buf, size_t buflen);

/* The vector's samples carry chains no longer than the host's max_stack and the 127
 * the vectors were computed with: otherwise their ring bytes do not apply here. */
int pecs_vector_fits_host(struct pecs_t *t, const struct pecs_vec_stream *v);

/* PECS_FXT_MAGIC_WORD as the stream carries it, little-endian. */
extern const uint8_t pecs_fxt_magic[8];

/* Whether detection must pick the vector's own format: an FXT stream whose first bytes
 * are (a prefix of) the magic word, or markup whose first bytes cannot become it. */
int pecs_vector_detect_agrees(const struct pecs_vec_stream *v);

#endif /* PECS_TOOLKIT_PROFILER_H */
