/* The seam between an event and the profiler that feeds it, inside ref: the hooks the
 * engine calls on a profiler (struct ref_sampler_ops), how a profiler is attached or
 * provided, and the calls by which it hands samples and losses back. ref/profiler is
 * the one implementation; ref's users see only ref_config.profiler (pecs/ref.h). Both
 * sides are built together, so these structs carry no size. */
#ifndef REF_EVENT_PROFILER_SEAM_H
#define REF_EVENT_PROFILER_SEAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/ref.h"

struct ref_event;

/* A profiler that feeds one event with live samples (the sampler and replay profilers
 * in ref/profiler implement it). start runs when the event becomes enabled, stop when
 * it is disabled (before the disable returns, so stop may still deliver the samples it
 * has buffered), release when the event goes away. None of them runs under the engine
 * lock; samples come back through ref_event_deliver_sample() (ref/event/event_deliver.c).
 * An event that disables itself (REFRESH limit reached) does not call stop: delivery
 * then returns REF_DELIVER_OFF and drops the sample. */
struct ref_sampler_ops {
	int (*start)(void *priv, struct ref_event *ev);
	void (*stop)(void *priv, struct ref_event *ev);
	void (*release)(void *priv);
	/* Optional: delivers every sample taken so far before it returns. Linux writes a
	 * sample at the overflow itself, so a call made after it sees it; a profiler that
	 * hands samples over later is flushed first by the calls that depend on them:
	 * read(2) (counts, LOST), poll(2), and the RESET, REFRESH, PERIOD, SET_OUTPUT and
	 * PAUSE_OUTPUT ioctls (each applies to later samples only). Not under the engine
	 * lock; it may run while the event is disabled, and then has nothing to do. */
	void (*flush)(void *priv, struct ref_event *ev);
	/* Optional: the running event's period changed (IOC_PERIOD); the profiler re-reads
	 * ref_event_get_info(). Linux's hrtimer takes the new period from its next
	 * expiry. Called after the ioctl, not under the engine lock. */
	void (*reconfigure)(void *priv, struct ref_event *ev);
};
/* -EBUSY when the event already has a profiler (attached, or provided when it first
 * ran), -EINVAL for a counting event, -EBADF for an unknown fd. */
int ref_engine_attach_sampler(struct ref_engine *e, int fd, const struct ref_sampler_ops *ops,
			      void *priv);

/* What a profiler needs to know about the event it feeds. */
struct ref_event_info {
	uint64_t id;
	uint64_t period;    /* sampling period (clock events: ns; freq already converted) */
	uint64_t sample_type;
	pid_t pid, tid;     /* target task; pid -1 for a cpu-wide event */
	int cpu;
	uint32_t max_stack; /* attr.sample_max_stack as open resolved it */
	uint32_t type;      /* attr.type and attr.config: which event it is */
	uint64_t config;
	int sigtrap;        /* attr.sigtrap: each overflow sends SIGTRAP with sig_data */
	uint64_t sig_data;
	uint32_t stack_user; /* attr.sample_stack_user: STACK_USER's bytes */
};
int ref_event_get_info(struct ref_event *ev, struct ref_event_info *info);

/* Delivers one sample from a live profiler; same rules as ref_engine_inject_sample().
 * Returns 0 when written or counted lost, REF_DELIVER_OFF when the event is disabled
 * (sample dropped), or a negative errno. */
#define REF_DELIVER_OFF 1
int ref_event_deliver_sample(struct ref_event *ev, const struct pecs_sample *s);
/* A batch of samples under one taking of the engine lock: between begin and end the
 * caller delivers with ref_event_deliver_batched() only (same rules and returns as
 * ref_event_deliver_sample()) and makes no other engine call. */
void ref_event_deliver_begin(struct ref_event *ev);
int ref_event_deliver_batched(struct ref_event *ev, const struct pecs_sample *s);
void ref_event_deliver_end(struct ref_event *ev);

/* nr samples the profiler took but could not keep (its own buffer was full): lost, as
 * perf_output_begin() counts a sample that finds no room. They add to the event's LOST
 * (read(2)) and go out in the next PERF_RECORD_LOST of its ring. Ignored, as on Linux,
 * while the event is off or has no ring with data pages. 0 or a negative errno. */
int ref_event_deliver_lost(struct ref_event *ev, uint64_t nr);

/* Where a sampling event's samples come from when nobody attached a profiler to it
 * (ref_engine_attach_sampler()) before it first ran. The engine asks once per event,
 * without its lock held, the first time the event is scheduled in; a Starnix kernel
 * likewise opens a profiler session for each sampling event itself. attach fills *ops
 * and *priv as ref_engine_attach_sampler() takes them and returns 0, or returns a
 * negative errno: the event then counts but writes no samples, as an event whose PMU
 * could not start, and is not asked about again. */
struct ref_profiler_provider {
	int (*attach)(void *arg, struct ref_event *ev, struct ref_sampler_ops *ops, void **priv);
	void *arg;
};

#endif /* REF_EVENT_PROFILER_SEAM_H */
