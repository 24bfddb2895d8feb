/* The profiler session an event drives: ENABLE configures and starts the profiler and a
 * collector that feeds its stream through the FXT/markup decoder into a sample sink;
 * DISABLE stops the profiler, drains what is left, and resets it (as Starnix does:
 * Stop, drain the socket, Reset).
 *
 * For a sampler the collector is a thread draining while the event is enabled, so the
 * sink and lost callbacks run on that thread (and on the thread calling poll/disable):
 * they are never called concurrently with each other, but the engine must guard its
 * ring against its own threads. A replay profiler's bytes are delivered at poll() and
 * disable(), on the caller's thread, which keeps conformance cases deterministic.
 *
 * Samples reach the sink with cpu and time from the profiler when the stream itself
 * has none (markup has no timestamps), and period 0: the event decides what
 * PERF_SAMPLE_PERIOD says (a clock event keeps its open-time period, as Linux does).
 */
#ifndef PECS_PROFILER_SESSION_H
#define PECS_PROFILER_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/profiler_stream.h"
#include "pecs/profiler/profiler.h"
#include "pecs/stream/stream.h"

struct ref_profiler_session_opts {
	ref_sample_sink sink; /* required */
	void *sink_ctx;
	/* Samples the profiler had to drop (buffer full): the engine's LOST. May be NULL. */
	int (*lost)(void *ctx, uint64_t nr);
	/* Koid map for the decoder (copied). NULL/0: a replay profiler's own map, else
	 * koids are Linux ids (what the live sampler writes). */
	const struct pecs_koid_map_entry *koids;
	size_t nr_koids;
	unsigned poll_us; /* collector thread's sleep between drains; 0: 10 ms */
	/* Optional: called with 1 before and 0 after each chunk the decoder turns into
	 * samples, so the sink can take its locks once per chunk, not once per sample.
	 * Samples may also reach the sink outside a batch (at the stream's end). */
	void (*batch)(void *ctx, int begin);
};

/* What ENABLE knows: the event's period (ns for the clock events), its call-graph
 * wish, and whose CPU time to sample. */
struct ref_profiler_enable {
	uint64_t period_ns;
	enum ref_profiler_callgraph callgraph;
	enum ref_profiler_task_kind kind; /* THREAD for an event on a task, either clock */
	uint64_t pid, tid;
	enum pecs_stream_format output;   /* a live sampler's stream format; 0: FXT */
	/* A task event bound to a CPU is sampled only while its task runs on cpu. */
	int cpu_bound, cpu;
	/* attr.sigtrap: a live sampler sends each overflow's SIGTRAP (TRAP_PERF) to the
	 * sampled thread, with sig_data and the event's type. */
	int sigtrap;
	uint64_t sig_data;
	uint32_t sig_type;
	/* The event samples registers (REGS_USER, REGS_INTR or STACK_USER), and
	 * STACK_USER's bytes: what a live sampler captures with each sample. */
	int user_regs;
	uint32_t user_stack;
};

struct ref_profiler_session_result {
	struct ref_profiler_result profiler; /* Stop()'s stats */
	struct ref_stream_stats stream;      /* what the decoder saw */
	struct ref_stream_error error;       /* code 0 when the stream was well formed */
	enum pecs_stream_format format;      /* the format decoded (detected or named) */
};

struct ref_profiler_session;

/* Takes ownership of profiler (a replay or a sampler), also on failure. */
int ref_profiler_session_new(struct ref_profiler_session **out, struct ref_profiler *profiler,
			     const struct ref_profiler_session_opts *opts);
void ref_profiler_session_free(struct ref_profiler_session *s);

/* Configure + Start. -EBUSY (FIDL BAD_STATE) when already enabled, -EINVAL
 * (INVALID_CONFIGURATION, ...) for a configuration the profiler refuses. */
int ref_profiler_session_enable(struct ref_profiler_session *s,
				const struct ref_profiler_enable *en);
/* Delivers what the profiler has written so far. */
int ref_profiler_session_poll(struct ref_profiler_session *s);
/* The engine's flush: for a live profiler, delivers every sample taken so far before
 * returning (the samples of the calling thread's own signals are all in its buffer by
 * then); a replay profiler still waits for disable. 0 also when not enabled. */
int ref_profiler_session_flush(struct ref_profiler_session *s);
/* Stop, drain to the end of the stream, Reset. A malformed stream is not a failure of
 * disable: the samples before the bad byte were delivered and res->error says where it
 * stopped. -EBUSY when not enabled. */
int ref_profiler_session_disable(struct ref_profiler_session *s,
				 struct ref_profiler_session_result *res);
int ref_profiler_session_enabled(const struct ref_profiler_session *s);
struct ref_profiler *ref_profiler_session_profiler(struct ref_profiler_session *s);

#endif /* PECS_PROFILER_SESSION_H */
