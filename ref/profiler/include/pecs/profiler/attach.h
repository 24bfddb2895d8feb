/* Wires a profiler session to a sampling event of the reference engine: the event's
 * ENABLE configures and starts the session (period, call graph and task from the
 * event), its DISABLE stops, drains and resets it before returning, the engine's flush
 * drains a live session, and the event's release frees it. Samples go to
 * ref_event_deliver_sample(); samples the live sampler drops on a full buffer go to
 * ref_event_deliver_lost(), the event's LOST.
 */
#ifndef PECS_PROFILER_ATTACH_H
#define PECS_PROFILER_ATTACH_H

#include "pecs/profiler_stream.h"
#include "pecs/profiler/sampler.h"

struct ref_engine;

/* The suite's set_profiler: the event at fd will consume this scripted stream (copied)
 * each time it is enabled. */
int ref_profiler_attach_replay(struct ref_engine *e, int fd,
			       const struct pecs_profiler_stream *stream);

/* A live sampler of the event's own task (a thread of this process). opts may be NULL;
 * output is the stream format the sampler writes (FXT or MARKUP). Only cpu-clock and
 * task-clock events get live samples (CPU time is what the sampler measures), at no
 * less than 10 us apart, as the kernel's hrtimer. */
int ref_profiler_attach_sampler(struct ref_engine *e, int fd, const struct ref_sampler_opts *opts,
				enum pecs_stream_format output);

/* For ref_config.profiler: every sampling event nobody attached a profiler to gets a
 * live sampler (FXT) of its own task when it first runs, as ref_profiler_attach_sampler()
 * with default options would give it. */
const struct ref_profiler_provider *ref_profiler_live(void);

#endif /* PECS_PROFILER_ATTACH_H */
