#include "pecs/profiler/session.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pecs/profiler/replay.h"
#include "pecs/profiler/sampler.h"
#include "pecs/stream/decoder.h"
#include "profiler_impl.h"

/* Larger than any one sample's entry, so one read carries a whole sample. */
#define READ_CHUNK 16384u

struct ref_profiler_session {
	struct ref_profiler *profiler;
	struct ref_profiler_session_opts opts;
	struct pecs_koid_map_entry *koids;
	size_t nr_koids;

	bool enabled;            /* under lock */
	struct ref_stream_decoder *decoder;
	int decode_ret;
	uint64_t lost_reported;
	/* A replay's bounded buffer (buffer_samples): samples kept and dropped this enable. */
	size_t capacity;
	uint64_t kept, dropped_full;
	/* The sample being decoded: what the profiler said about it. */
	uint32_t cur_cpu;
	uint64_t cur_time;

	/* One drainer at a time (the collector, or poll/flush/disable), and enable and
	 * disable change the profiler's state under it, so a flush from another thread
	 * sees a profiler either fully started or fully stopped. */
	pthread_mutex_t lock;
	pthread_t thread;
	pthread_cond_t wake; /* stop_thread set: the collector's nap ends */
	unsigned nap_us; /* the collector's sleep between drains this enable */
	bool have_thread;
	atomic_bool stop_thread;
	uint8_t buf[READ_CHUNK];
};

static int forward(void *ctx, const struct pecs_sample *in)
{
	struct ref_profiler_session *s = ctx;
	struct pecs_sample out;

	/* The replay wrote its whole stream at start: what its buffer could not hold was
	 * dropped then, whenever it is read. */
	if (s->capacity && s->kept >= s->capacity) {
		s->dropped_full++;
		return 0;
	}
	s->kept++;
	/* Period 0: the event's own PERF_SAMPLE_PERIOD applies, which for the clock
	 * events is the open-time period even after IOC_PERIOD has moved the timer. */
	if (in->cpu == s->cur_cpu && (in->time || !s->cur_time))
		return s->opts.sink(s->opts.sink_ctx, in); /* nothing to add: no copy */
	out = *in;
	out.cpu = s->cur_cpu;
	if (!out.time)
		out.time = s->cur_time;
	return s->opts.sink(s->opts.sink_ctx, &out);
}

int ref_profiler_session_new(struct ref_profiler_session **out, struct ref_profiler *profiler,
			     const struct ref_profiler_session_opts *opts)
{
	struct ref_profiler_session *s;
	const struct pecs_koid_map_entry *koids;
	size_t nr;
	pthread_condattr_t ca;

	if (!out || !profiler || !opts || !opts->sink) {
		ref_profiler_free(profiler);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		ref_profiler_free(profiler);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	s->profiler = profiler;
	s->opts = *opts;
	koids = opts->koids;
	nr = opts->nr_koids;
	if (!koids && !nr)
		koids = ref_replay_koids(profiler, &nr);
	if (nr) {
		s->koids = malloc(nr * sizeof(*s->koids));
		if (!s->koids) {
			ref_profiler_session_free(s);
			return -ENOMEM;
		}
		memcpy(s->koids, koids, nr * sizeof(*s->koids));
		s->nr_koids = nr;
	}
	*out = s;
	return 0;
}

/* Hands the drops not yet reported to the engine (its LOST). Caller holds the lock. */
static void report_lost_locked(struct ref_profiler_session *s)
{
	uint64_t dropped = ref_sampler_dropped(s->profiler) + s->dropped_full;

	if (dropped > s->lost_reported && s->opts.lost) {
		s->opts.lost(s->opts.sink_ctx, dropped - s->lost_reported);
		s->lost_reported = dropped;
	}
}

/* Reads everything taken by now into the decoder. Caller holds the lock. */
static void drain_locked(struct ref_profiler_session *s)
{
	if (s->profiler->ops->mark_end)
		s->profiler->ops->mark_end(s->profiler);
	for (;;) {
		uint32_t cpu;
		uint64_t time;
		const void *data;
		ssize_t n = ref_profiler_view_sample(s->profiler, s->buf, &data, sizeof(s->buf),
						     &cpu, &time);

		if (n <= 0)
			break;
		/* After a stream error the rest is still read, so the profiler's buffer
		 * empties, but no longer decoded. */
		if (s->decode_ret)
			continue;
		s->cur_cpu = cpu;
		s->cur_time = time;
		if (s->opts.batch)
			s->opts.batch(s->opts.sink_ctx, 1);
		s->decode_ret = ref_stream_decoder_feed(s->decoder, data, (size_t)n);
		if (s->opts.batch)
			s->opts.batch(s->opts.sink_ctx, 0);
	}
	report_lost_locked(s);
}

static void *collector(void *arg)
{
	struct ref_profiler_session *s = arg;
	struct timespec until;
	uint64_t ns;

	/* Disable wakes the nap rather than wait it out: a DISABLE that joined a sleeping
	 * collector took up to a nap of the caller's time (most of
	 * Engine.Record.LayoutVectorsByteExact's). */
	pthread_mutex_lock(&s->lock);
	while (!atomic_load_explicit(&s->stop_thread, memory_order_acquire)) {
		drain_locked(s);
		clock_gettime(CLOCK_MONOTONIC, &until);
		ns = (uint64_t)until.tv_nsec + (uint64_t)s->nap_us * 1000u;
		until.tv_sec += (time_t)(ns / 1000000000u);
		until.tv_nsec = (long)(ns % 1000000000u);
		while (!atomic_load_explicit(&s->stop_thread, memory_order_acquire) &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The collector only moves what the handlers took into the sink; poll, read and the
 * ioctls drain on demand (engine_flush.c), so only a reader of the mapping alone waits
 * for it, as the suite's ring readers do: every 10 ms at any rate. Every millisecond was
 * most of the helper threads' cost at 1 kHz; every 64 periods (up to 50 ms) made a
 * mapping reader's two samples at 10 ms come later than Linux could
 * (Record.Sample.GroupMemberReadOwnTimes ENV_SKIP). */
#define COLLECTOR_NAP_US 10000u

static unsigned collector_nap_us(const struct ref_profiler_session *s)
{
	return s->opts.poll_us ? s->opts.poll_us : COLLECTOR_NAP_US;
}

static int enable_locked(struct ref_profiler_session *s, const struct ref_profiler_enable *en)
{
	struct ref_profiler_sampling sampling;
	struct ref_profiler_target target;
	struct ref_profiler_config cfg = { 0 };
	struct ref_profiler_start_opts start = { .buffer_results = 1 };
	struct ref_stream_target t = { .sink = forward, .sink_ctx = s };
	enum pecs_stream_format fmt;
	bool live;
	int ret;

	if (s->enabled)
		return ref_profiler_fidl_errno(REF_PROFILER_BAD_STATE);
	sampling.period = en->period_ns;
	sampling.timebase = REF_PROFILER_NANOSECONDS;
	sampling.callgraph = en->callgraph;
	sampling.user_regs = en->user_regs;
	sampling.user_stack = en->user_stack;
	target.kind = en->kind;
	target.koid = en->kind == REF_PROFILER_TASK_THREAD ? en->tid : en->pid;
	target.thread = en->tid;
	target.cpu_bound = en->cpu_bound;
	target.cpu = en->cpu;
	target.sigtrap = en->sigtrap;
	target.sig_data = en->sig_data;
	target.sig_type = en->sig_type;
	cfg.samplings = &sampling;
	cfg.nr_samplings = 1;
	cfg.targets = &target;
	cfg.nr_targets = 1;
	cfg.output = en->output;
	ret = ref_profiler_configure(s->profiler, &cfg);
	if (ret)
		return ret;

	live = s->profiler->ops->live;
	fmt = live ? ref_profiler_output(s->profiler) : ref_replay_format(s->profiler);
	t.koids = s->koids;
	t.nr_koids = s->nr_koids;
	ret = ref_stream_decoder_new(&s->decoder, fmt, &t);
	if (ret) {
		ref_profiler_reset(s->profiler);
		return ret;
	}
	s->decode_ret = 0;
	s->lost_reported = 0;
	s->capacity = live ? 0 : ref_replay_buffer_samples(s->profiler);
	s->kept = s->dropped_full = 0;
	ret = ref_profiler_start(s->profiler, &start);
	if (ret) {
		ref_stream_decoder_free(s->decoder);
		s->decoder = NULL;
		ref_profiler_reset(s->profiler);
		return ret;
	}
	s->enabled = true;
	/* Only a live profiler produces while enabled; a script is read at poll/disable. */
	if (live) {
		s->nap_us = collector_nap_us(s);
		atomic_store_explicit(&s->stop_thread, false, memory_order_relaxed);
		/* The collector's first drain waits for the lock the caller holds. */
		if (pthread_create(&s->thread, NULL, collector, s) == 0)
			s->have_thread = true;
	}
	return 0;
}

int ref_profiler_session_enable(struct ref_profiler_session *s,
				const struct ref_profiler_enable *en)
{
	int ret;

	if (!en)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	ret = enable_locked(s, en);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int ref_profiler_session_poll(struct ref_profiler_session *s)
{
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	if (s->enabled)
		drain_locked(s);
	else
		ret = ref_profiler_fidl_errno(REF_PROFILER_BAD_STATE);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int ref_profiler_session_flush(struct ref_profiler_session *s)
{
	/* A script is read at disable only, which keeps replayed cases deterministic. */
	if (!s->profiler->ops->live)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (s->enabled)
		drain_locked(s);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int ref_profiler_session_disable(struct ref_profiler_session *s,
				 struct ref_profiler_session_result *res)
{
	struct ref_profiler_session_result r = { 0 };

	pthread_mutex_lock(&s->lock);
	if (!s->enabled) {
		pthread_mutex_unlock(&s->lock);
		return ref_profiler_fidl_errno(REF_PROFILER_BAD_STATE);
	}
	if (s->have_thread) {
		pthread_t collector_thread = s->thread;

		/* Joined without the lock, which the collector takes for each drain. */
		s->have_thread = false;
		atomic_store_explicit(&s->stop_thread, true, memory_order_release);
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(collector_thread, NULL);
		pthread_mutex_lock(&s->lock);
		if (!s->enabled) { /* a concurrent disable finished meanwhile */
			pthread_mutex_unlock(&s->lock);
			return ref_profiler_fidl_errno(REF_PROFILER_BAD_STATE);
		}
	}
	/* Under the lock to the end: a concurrent flush either runs before this or finds
	 * the session disabled, never a stopping ticker or a freed decoder. */
	ref_profiler_stop(s->profiler, &r.profiler);
	drain_locked(s); /* stopped: reads until the stream's end */
	if (!s->decode_ret)
		s->decode_ret = ref_stream_decoder_finish(s->decoder);
	report_lost_locked(s); /* the end of the stream may have held the last sample */

	ref_stream_decoder_stats(s->decoder, &r.stream);
	ref_stream_decoder_error(s->decoder, &r.error);
	r.format = ref_stream_decoder_format(s->decoder);
	r.profiler.missing_process_mappings = r.stream.dropped_unmapped;
	r.profiler.dropped_buffer_full += s->dropped_full;
	if (r.profiler.samples_collected == 0) /* a script: count what it contained */
		r.profiler.samples_collected = r.stream.samples + r.stream.dropped_unmapped;
	ref_stream_decoder_free(s->decoder);
	s->decoder = NULL;
	ref_profiler_reset(s->profiler);
	s->enabled = false;
	pthread_mutex_unlock(&s->lock);
	if (res)
		*res = r;
	return 0;
}

int ref_profiler_session_enabled(const struct ref_profiler_session *s)
{
	struct ref_profiler_session *m = (struct ref_profiler_session *)s;
	bool on;

	pthread_mutex_lock(&m->lock);
	on = s->enabled;
	pthread_mutex_unlock(&m->lock);
	return on;
}

struct ref_profiler *ref_profiler_session_profiler(struct ref_profiler_session *s)
{
	return s->profiler;
}

void ref_profiler_session_free(struct ref_profiler_session *s)
{
	if (!s)
		return;
	if (s->enabled)
		ref_profiler_session_disable(s, NULL);
	ref_profiler_free(s->profiler);
	free(s->koids);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
