#include "pecs/profiler/attach.h"

#include <errno.h>
#include <stdlib.h>

#include "pecs/profiler/replay.h"
#include "pecs/profiler/session.h"
#include "pecs/ref.h"

struct glue {
	struct ref_profiler_session *session;
	struct ref_event *ev;
	enum pecs_stream_format output;
};

static int deliver(void *ctx, const struct pecs_sample *s)
{
	struct glue *g = ctx;
	int ret = ref_event_deliver_sample(g->ev, s);

	/* REF_DELIVER_OFF: the event turned itself off (REFRESH); not a stream error. */
	return ret < 0 ? ret : 0;
}

static int lost(void *ctx, uint64_t nr)
{
	struct glue *g = ctx;

	return ref_event_deliver_lost(g->ev, nr);
}

static int on_start(void *priv, struct ref_event *ev)
{
	struct glue *g = priv;
	struct ref_event_info info = { .size = sizeof(info) };
	struct ref_profiler_enable en = { .size = sizeof(en) };
	int ret = ref_event_get_info(ev, &info);

	if (ret)
		return ret;
	g->ev = ev;
	en.period_ns = info.period;
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
	.size = sizeof(glue_ops),
	.start = on_start,
	.stop = on_stop,
	.release = on_release,
	.flush = on_flush,
};

static int attach(struct ref_engine *e, int fd, struct ref_profiler *p,
		  enum pecs_stream_format output)
{
	struct glue *g = calloc(1, sizeof(*g));
	struct ref_profiler_session_opts opts = {
		.size = sizeof(opts), .sink = deliver, .lost = lost,
	};
	int ret;

	if (!g) {
		ref_profiler_free(p);
		return -ENOMEM;
	}
	opts.sink_ctx = g;
	g->output = output;
	ret = ref_profiler_session_new(&g->session, p, &opts);
	if (ret) {
		free(g);
		return ret;
	}
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
	return attach(e, fd, p, PECS_STREAM_FXT);
}

int ref_profiler_attach_sampler(struct ref_engine *e, int fd, const struct ref_sampler_opts *opts,
				enum pecs_stream_format output)
{
	struct ref_profiler *p;
	int ret = ref_profiler_new_sampler(&p, opts);

	if (ret)
		return ret;
	return attach(e, fd, p, output);
}
