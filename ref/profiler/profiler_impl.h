/* What a profiler kind implements behind ref_profiler; private to ref/profiler. */
#ifndef REF_PROFILER_IMPL_H
#define REF_PROFILER_IMPL_H

#include <stdbool.h>

#include "pecs/profiler/profiler.h"

enum ref_profiler_state {
	REF_PROFILER_IDLE,       /* no configuration */
	REF_PROFILER_CONFIGURED,
	REF_PROFILER_RUNNING,
	REF_PROFILER_STOPPED,    /* the stream can still be read to its end */
};

/* The generic layer has checked the state and the configuration's shape before any of
 * these run; each returns 0, a FIDL error (> 0) for configure/start, or -errno. */
struct ref_profiler_ops {
	bool live; /* writes while running (a sampler), rather than serving a script */
	int (*configure)(struct ref_profiler *p);
	int (*start)(struct ref_profiler *p, size_t buffer_bytes);
	void (*stop)(struct ref_profiler *p, struct ref_profiler_result *res);
	/* cpu/time describe the sample the bytes belong to, when the kind knows them. */
	ssize_t (*read)(struct ref_profiler *p, void *buf, size_t len, uint32_t *cpu,
			uint64_t *time);
	/* Optional: as read, but hands out a view of the kind's own bytes, valid until its
	 * next call, so that a script is decoded where it lies rather than copied first. */
	ssize_t (*view)(struct ref_profiler *p, const void **data, size_t len, uint32_t *cpu,
			uint64_t *time);
	/* Optional: the reads that follow end, once, at what has been taken by now. A drain
	 * on the sampled thread itself would otherwise chase the samples its own signals
	 * keep adding, and never return when a period is shorter than a sample's delivery;
	 * what comes after is the next drain's. */
	void (*mark_end)(struct ref_profiler *p);
	void (*reset)(struct ref_profiler *p);
	void (*destroy)(struct ref_profiler *p);
};

struct ref_profiler {
	const struct ref_profiler_ops *ops;
	void *impl;
	enum ref_profiler_state state;
	enum ref_profiler_fidl_error last;
	struct ref_profiler_sampling sampling;
	struct ref_profiler_target target;
	enum pecs_stream_format output;
};

struct ref_profiler *ref_profiler_alloc(const struct ref_profiler_ops *ops, void *impl);

/* For the session's collector: the bytes of at most one sample, with its cpu and time
 * when the profiler knows them (0 otherwise). */
ssize_t ref_profiler_read_sample(struct ref_profiler *p, void *buf, size_t len, uint32_t *cpu,
				 uint64_t *time);

/* The same, reading in place where the kind can (its view op), else copying into buf;
 * *data is where the bytes are. */
ssize_t ref_profiler_view_sample(struct ref_profiler *p, void *buf, const void **data, size_t len,
				 uint32_t *cpu, uint64_t *time);

#endif /* REF_PROFILER_IMPL_H */
