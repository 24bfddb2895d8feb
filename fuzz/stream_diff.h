/* What every stream fuzz target checks: one input decoded in one push and in chunks
 * must give the same samples, the same side records, the same verdict and (when the
 * stream was accepted) the same counters. A difference abort()s, so libFuzzer keeps
 * the input as a crash.
 *
 * A stream target's input is one control byte, then the stream:
 *   bits 0-3  chunk schedule: 0 one byte at a time, 1-7 random sizes 1..17,
 *             8-15 random sizes 1..2^(n-4) (16..2048)
 *   bit 4     map koids through a fixed table (the vectors' koids) instead of as ids
 *   bit 5     no observer for side records
 *   bit 6     the sink refuses sample number (bits 0-2) + 1
 */
#ifndef PECS_FUZZ_STREAM_DIFF_H
#define PECS_FUZZ_STREAM_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/stream/stream.h"

/* A parser behind one shape, so the same driver runs the FXT reader, the markup reader
 * and the decoder. arg is the target's own (the decoder's format). */
struct fuzz_parser {
	const char *name;
	int (*create)(void **p, const struct ref_stream_target *t, const void *arg);
	int (*feed)(void *p, const void *data, size_t len);
	int (*finish)(void *p);
	void (*error)(void *p, struct ref_stream_error *err);
	void (*stats)(void *p, struct ref_stream_stats *stats);
	void (*destroy)(void *p);
};

/* Everything a run handed out, kept whole so two runs compare field by field. */
struct fuzz_outcome {
	struct pecs_sample *samples; /* ips point into ips */
	uint64_t *ips;
	size_t nr_samples, cap_samples, nr_ips, cap_ips;
	/* Side records: kind, ids and a hash of each name or build id, in order. */
	uint64_t *side;
	size_t nr_side, cap_side;
	int feed_ret, finish_ret;
	struct ref_stream_error err;
	struct ref_stream_stats stats;
};

/* Decodes stream[0..len) with the control byte's settings; chunked == 0 pushes it in one
 * feed. Aborts on allocation failure. */
void fuzz_stream_run(const struct fuzz_parser *parser, const void *arg, uint8_t ctrl,
		     const uint8_t *stream, size_t len, int chunked, struct fuzz_outcome *out);

/* abort()s with both runs' verdicts on stderr unless a and b agree. */
void fuzz_outcome_require_same(const struct fuzz_outcome *a, const struct fuzz_outcome *b,
			       const char *what);

void fuzz_outcome_release(struct fuzz_outcome *o);

/* The whole check for a target: one push against chunks. */
void fuzz_stream_check(const struct fuzz_parser *parser, const void *arg, const uint8_t *data,
		       size_t size);

#endif /* PECS_FUZZ_STREAM_DIFF_H */
