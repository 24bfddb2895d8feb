#include "pecs/profiler/attach.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pecs/profiler/replay.h"
#include "pecs/profiler/session.h"
#include "pecs/ref.h"
#include "ref/event/profiler_seam.h"

struct glue {
	struct ref_profiler_session *session;
	struct ref_event *ev;
	enum pecs_stream_format output;
	bool live;
	bool in_batch; /* the event's delivery lock is held (session's lock serialises) */
};

/* perf_swevent_start_hrtimer(): the clock events' timer never runs faster than 10 us,
 * whatever sample_period says (the samples still carry sample_period). */
#define HRTIMER_MIN_PERIOD_NS 10000u

/* The live sampler measures CPU time, which is what cpu-clock and task-clock count; the
 * other software events overflow on things it cannot see (faults, switches), so they
 * get no live samples, rather than CPU-time ones under their name. */
static bool counts_cpu_time(const struct ref_event_info *info)
{
	return info->type == PECS_TYPE_SOFTWARE &&
	       (info->config == PECS_SW_CPU_CLOCK || info->config == PECS_SW_TASK_CLOCK);
}

static int deliver(void *ctx, const struct pecs_sample *s)
{
	struct glue *g = ctx;
	int ret = g->in_batch ? ref_event_deliver_batched(g->ev, s)
			      : ref_event_deliver_sample(g->ev, s);

	/* REF_DELIVER_OFF: the event turned itself off (REFRESH); not a stream error. */
	return ret < 0 ? ret : 0;
}

static void batch(void *ctx, int begin)
{
	struct glue *g = ctx;

	if (begin)
		ref_event_deliver_begin(g->ev);
	else
		ref_event_deliver_end(g->ev);
	g->in_batch = begin;
}

static int lost(void *ctx, uint64_t nr)
{
	struct glue *g = ctx;

	return ref_event_deliver_lost(g->ev, nr);
}

static int on_start(void *priv, struct ref_event *ev)
{
	struct glue *g = priv;
	struct ref_event_info info;
	struct ref_profiler_enable en = { 0 };
	int ret = ref_event_get_info(ev, &info);

	if (ret)
		return ret;
	g->ev = ev;
	if (g->live && !counts_cpu_time(&info))
		return 0;
	en.period_ns = info.period;
	if (g->live && en.period_ns < HRTIMER_MIN_PERIOD_NS)
		en.period_ns = HRTIMER_MIN_PERIOD_NS;
	en.callgraph = info.sample_type & PECS_SAMPLE_CALLCHAIN
			       ? REF_PROFILER_CALLGRAPH_FRAME_POINTER
			       : REF_PROFILER_CALLGRAPH_NONE;
	/* An event on one thread samples that thread's CPU time; pid -1 (cpu-wide) asks
	 * for the system, which the live sampler refuses. */
	if (info.pid < 0) {
		en.kind = REF_PROFILER_TASK_SYSTEM_WIDE;
	} else if (info.tid > 0) {
		en.kind = REF_PROFILER_TASK_THREAD;
		en.tid = (uint64_t)info.tid;
		en.pid = (uint64_t)info.pid;
	} else {
		en.kind = REF_PROFILER_TASK_PROCESS;
		en.pid = (uint64_t)info.pid;
	}
	/* event_filter_match(): a task event bound to a CPU runs only while its task is
	 * there, so its timer does too. */
	en.cpu_bound = info.pid >= 0 && info.cpu >= 0;
	en.cpu = info.cpu;
	en.sigtrap = info.sigtrap;
	en.sig_data = info.sig_data;
	en.sig_type = info.type;
	en.user_regs = (info.sample_type & (PECS_SAMPLE_REGS_USER | PECS_SAMPLE_REGS_INTR |
					    PECS_SAMPLE_STACK_USER)) != 0;
	en.user_stack = info.sample_type & PECS_SAMPLE_STACK_USER ? info.stack_user : 0;
	en.output = g->output;
	return ref_profiler_session_enable(g->session, &en);
}

static void on_stop(void *priv, struct ref_event *ev)
{
	struct glue *g = priv;

	(void)ev;
	if (ref_profiler_session_enabled(g->session))
		ref_profiler_session_disable(g->session, NULL);
}

/* A live session restarts at the new period: what it took so far is delivered first,
 * and the next sample comes a whole new period later (Linux lets the period already
 * under way end first). A script is not restarted: it would be served again. */
static void on_reconfigure(void *priv, struct ref_event *ev)
{
	struct glue *g = priv;

	if (!g->live || !ref_profiler_session_enabled(g->session))
		return;
	ref_profiler_session_disable(g->session, NULL);
	on_start(priv, ev);
}

static void on_flush(void *priv, struct ref_event *ev)
{
	struct glue *g = priv;

	(void)ev;
	ref_profiler_session_flush(g->session);
}

static void on_release(void *priv)
{
	struct glue *g = priv;

	ref_profiler_session_free(g->session);
	free(g);
}

static const struct ref_sampler_ops glue_ops = {
	.start = on_start,
	.stop = on_stop,
	.release = on_release,
	.flush = on_flush,
	.reconfigure = on_reconfigure,
};

/* A session around p, as the hooks the engine calls; p is consumed. */
static int make_glue(struct ref_profiler *p, enum pecs_stream_format output, bool live,
		     struct glue **out)
{
	struct glue *g = calloc(1, sizeof(*g));
	struct ref_profiler_session_opts opts = {
		.sink = deliver, .lost = lost, .batch = batch,
	};
	int ret;

	if (!g) {
		ref_profiler_free(p);
		return -ENOMEM;
	}
	opts.sink_ctx = g;
	g->output = output;
	g->live = live;
	ret = ref_profiler_session_new(&g->session, p, &opts);
	if (ret) {
		free(g);
		return ret;
	}
	*out = g;
	return 0;
}

static int attach(struct ref_engine *e, int fd, struct ref_profiler *p,
		  enum pecs_stream_format output, bool live)
{
	struct glue *g;
	int ret = make_glue(p, output, live, &g);

	if (ret)
		return ret;
	ret = ref_engine_attach_sampler(e, fd, &glue_ops, g);
	if (ret)
		on_release(g);
	return ret;
}

int ref_profiler_attach_replay(struct ref_engine *e, int fd,
			       const struct pecs_profiler_stream *stream)
{
	struct ref_profiler *p;
	int ret = ref_profiler_new_replay(&p, stream);

	if (ret)
		return ret;
	return attach(e, fd, p, PECS_STREAM_FXT, false);
}

int ref_profiler_attach_sampler(struct ref_engine *e, int fd, const struct ref_sampler_opts *opts,
				enum pecs_stream_format output)
{
	struct ref_profiler *p;
	int ret = ref_profiler_new_sampler(&p, opts);

	if (ret)
		return ret;
	return attach(e, fd, p, output, true);
}

static int provide_live(void *arg, struct ref_event *ev, struct ref_sampler_ops *ops, void **priv)
{
	struct ref_profiler *p;
	struct glue *g;
	int ret;

	(void)arg;
	(void)ev;
	ret = ref_profiler_new_sampler(&p, NULL);
	if (!ret)
		ret = make_glue(p, PECS_STREAM_FXT, true, &g);
	if (ret)
		return ret;
	*ops = glue_ops;
	*priv = g;
	return 0;
}

static const struct ref_profiler_provider live_provider = {
	.attach = provide_live,
};

const struct ref_profiler_provider *ref_profiler_live(void)
{
	return &live_provider;
}
