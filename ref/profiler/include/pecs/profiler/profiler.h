/* A profiler in the shape of fuchsia.cpu.profiler.Session: configure, start, stop
 * (with stats), read the byte stream it wrote, reset. Two kinds exist: a replay
 * profiler serving a caller's bytes (replay.h) and a live sampler (sampler.h).
 *
 * Calls return 0 or a negative errno; the FIDL error behind a failure is kept and
 * ref_profiler_fidl_error() returns it, so callers that speak FIDL can report it as is.
 *
 * The option and result structs here, in sampler.h and in session.h are built only by
 * code of this tree, linked with the profiler it was compiled against: they carry no
 * size, and fields are simply added.
 */
#ifndef PECS_PROFILER_PROFILER_H
#define PECS_PROFILER_PROFILER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/profiler_stream.h"

/* fuchsia.cpu.profiler SessionConfigureError / SessionStartError values. */
enum ref_profiler_fidl_error {
	REF_PROFILER_OK = 0,
	REF_PROFILER_BAD_SOCKET = 1,
	REF_PROFILER_BAD_STATE = 2,
	REF_PROFILER_INVALID_CONFIGURATION = 3,
	REF_PROFILER_MISSING_SAMPLE_CONFIGS = 4,
	REF_PROFILER_MISSING_TARGET_CONFIGS = 5,
	REF_PROFILER_MISSING_COMPONENT_URL = 6,
};

/* The errno each FIDL error becomes at the C boundary. */
int ref_profiler_fidl_errno(enum ref_profiler_fidl_error e);

enum ref_profiler_counter {
	REF_PROFILER_NANOSECONDS = 0,
	REF_PROFILER_CYCLES = 1,
};

enum ref_profiler_callgraph {
	REF_PROFILER_CALLGRAPH_NONE = 0,
	REF_PROFILER_CALLGRAPH_DWARF = 1,
	REF_PROFILER_CALLGRAPH_LBR = 2,
	REF_PROFILER_CALLGRAPH_SHADOW_CALL_STACK = 3,
	REF_PROFILER_CALLGRAPH_FRAME_POINTER = 4,
};

struct ref_profiler_sampling {
	uint64_t period;                     /* in units of timebase; > 0 */
	enum ref_profiler_counter timebase;
	enum ref_profiler_callgraph callgraph;
	/* A live sampler's extra capture (Linux's REGS_USER/REGS_INTR and STACK_USER):
	 * the interrupted user registers, and up to user_stack bytes from their SP. A
	 * profiler that has neither ignores them. */
	int user_regs;
	uint32_t user_stack;
};

enum ref_profiler_task_kind {
	REF_PROFILER_TASK_PROCESS = 0, /* the whole process's CPU time */
	REF_PROFILER_TASK_THREAD = 1,  /* one thread's CPU time: a per-task clock event */
	REF_PROFILER_TASK_JOB = 2,
	REF_PROFILER_TASK_SYSTEM_WIDE = 3,
};

struct ref_profiler_target {
	enum ref_profiler_task_kind kind;
	uint64_t koid;       /* process or thread id */
	uint64_t thread;     /* PROCESS: the thread that takes the samples; 0 = koid itself */
	int cpu_bound, cpu;  /* sampled only while it runs on cpu (a live sampler) */
	int sigtrap;         /* a live sampler's SIGTRAP at each overflow, with these */
	uint64_t sig_data;
	uint32_t sig_type;
};

struct ref_profiler_config {
	const struct ref_profiler_sampling *samplings;
	size_t nr_samplings;
	const struct ref_profiler_target *targets;
	size_t nr_targets;
	enum pecs_stream_format output; /* what the profiler writes: FXT (default) or MARKUP */
};

struct ref_profiler_start_opts {
	uint32_t buffer_size_mb; /* 0: the FIDL default, 8 */
	int buffer_results;
};

/* Stop()'s SessionResult plus what pecs needs to report LOST samples. */
struct ref_profiler_result {
	uint64_t samples_collected;
	uint64_t mean_sample_time_us, min_sample_time_us, max_sample_time_us;
	uint64_t missing_process_mappings; /* samples whose koid had no Linux id */
	uint64_t dropped_buffer_full;      /* samples lost because the buffer was full */
	/* Of samples_collected, those whose stack is not their own moment's: the extra periods
	 * of a late signal and the ones a stop or flush caught up (live sampler only). */
	uint64_t samples_repeated;
	/* Periods late signals covered and the sampler still owed at stop (live sampler
	 * only; sampler.h): not samples, so never LOST, but the run's CPU time they stand
	 * for is not in the samples. */
	uint64_t periods_skipped;
	/* The most periods one signal covered: 1 when the ticker always kept up. */
	uint64_t most_periods_per_signal;
};

struct ref_profiler;

int ref_profiler_configure(struct ref_profiler *p, const struct ref_profiler_config *cfg);
int ref_profiler_start(struct ref_profiler *p, const struct ref_profiler_start_opts *opts);
int ref_profiler_stop(struct ref_profiler *p, struct ref_profiler_result *res);
/* Bytes written so far and not yet read: > 0 bytes, 0 when none are waiting now,
 * -EPIPE once stopped and empty (the socket's EOF), -EBUSY-style errors otherwise. */
ssize_t ref_profiler_read(struct ref_profiler *p, void *buf, size_t len);
int ref_profiler_reset(struct ref_profiler *p);
void ref_profiler_free(struct ref_profiler *p);

enum ref_profiler_fidl_error ref_profiler_fidl_error(const struct ref_profiler *p);
/* The period (ns) and output format of the running configuration. */
uint64_t ref_profiler_period_ns(const struct ref_profiler *p);
enum pecs_stream_format ref_profiler_output(const struct ref_profiler *p);
/* True once stop() has run: no further bytes will be written. */
int ref_profiler_stopped(const struct ref_profiler *p);

#endif /* PECS_PROFILER_PROFILER_H */
