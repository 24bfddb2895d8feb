#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profiler_impl.h"

#define DEFAULT_BUFFER_MB 8u

int ref_profiler_fidl_errno(enum ref_profiler_fidl_error e)
{
	switch (e) {
	case REF_PROFILER_OK:
		return 0;
	case REF_PROFILER_BAD_SOCKET:
		return -EBADF;
	case REF_PROFILER_BAD_STATE:
		return -EBUSY;
	case REF_PROFILER_INVALID_CONFIGURATION:
	case REF_PROFILER_MISSING_SAMPLE_CONFIGS:
	case REF_PROFILER_MISSING_TARGET_CONFIGS:
	case REF_PROFILER_MISSING_COMPONENT_URL:
		return -EINVAL;
	}
	return -EINVAL;
}

struct ref_profiler *ref_profiler_alloc(const struct ref_profiler_ops *ops, void *impl)
{
	struct ref_profiler *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->ops = ops;
	p->impl = impl;
	p->state = REF_PROFILER_IDLE;
	return p;
}

/* Records a FIDL error and returns its errno. */
static int refuse(struct ref_profiler *p, enum ref_profiler_fidl_error e)
{
	p->last = e;
	return ref_profiler_fidl_errno(e);
}

static int outcome(struct ref_profiler *p, int ret)
{
	if (ret > 0)
		return refuse(p, (enum ref_profiler_fidl_error)ret);
	p->last = REF_PROFILER_OK;
	return ret;
}

int ref_profiler_configure(struct ref_profiler *p, const struct ref_profiler_config *cfg)
{
	const struct ref_profiler_sampling *s;
	int ret;

	if (!cfg)
		return refuse(p, REF_PROFILER_INVALID_CONFIGURATION);
	if (p->state != REF_PROFILER_IDLE && p->state != REF_PROFILER_CONFIGURED)
		return refuse(p, REF_PROFILER_BAD_STATE);
	if (cfg->nr_samplings == 0 || !cfg->samplings)
		return refuse(p, REF_PROFILER_MISSING_SAMPLE_CONFIGS);
	if (cfg->nr_targets == 0 || !cfg->targets)
		return refuse(p, REF_PROFILER_MISSING_TARGET_CONFIGS);
	/* One event drives one session, so pecs takes exactly one of each. */
	if (cfg->nr_samplings != 1 || cfg->nr_targets != 1)
		return refuse(p, REF_PROFILER_INVALID_CONFIGURATION);
	s = cfg->samplings;
	if (s->period == 0 || s->timebase > REF_PROFILER_CYCLES ||
	    s->callgraph > REF_PROFILER_CALLGRAPH_FRAME_POINTER ||
	    cfg->targets->kind > REF_PROFILER_TASK_SYSTEM_WIDE ||
	    cfg->output > PECS_STREAM_MARKUP)
		return refuse(p, REF_PROFILER_INVALID_CONFIGURATION);
	p->sampling = *s;
	p->target = *cfg->targets;
	p->output = cfg->output == PECS_STREAM_MARKUP ? PECS_STREAM_MARKUP : PECS_STREAM_FXT;
	ret = outcome(p, p->ops->configure ? p->ops->configure(p) : 0);
	p->state = ret ? REF_PROFILER_IDLE : REF_PROFILER_CONFIGURED;
	return ret;
}

int ref_profiler_start(struct ref_profiler *p, const struct ref_profiler_start_opts *opts)
{
	uint32_t mb = opts && opts->buffer_size_mb ? opts->buffer_size_mb : DEFAULT_BUFFER_MB;
	int ret;

	if (p->state != REF_PROFILER_CONFIGURED)
		return refuse(p, REF_PROFILER_BAD_STATE);
	ret = outcome(p, p->ops->start(p, (size_t)mb << 20));
	if (ret == 0)
		p->state = REF_PROFILER_RUNNING;
	return ret;
}

int ref_profiler_stop(struct ref_profiler *p, struct ref_profiler_result *res)
{
	struct ref_profiler_result r = { 0 };

	if (p->state != REF_PROFILER_RUNNING)
		return refuse(p, REF_PROFILER_BAD_STATE);
	p->ops->stop(p, &r);
	p->state = REF_PROFILER_STOPPED;
	p->last = REF_PROFILER_OK;
	if (res)
		*res = r;
	return 0;
}

static ssize_t do_read(struct ref_profiler *p, void *buf, size_t len, uint32_t *cpu,
		       uint64_t *time)
{
	ssize_t n;

	if (p->state != REF_PROFILER_RUNNING && p->state != REF_PROFILER_STOPPED)
		return refuse(p, REF_PROFILER_BAD_STATE);
	if (len == 0)
		return 0;
	n = p->ops->read(p, buf, len, cpu, time);
	if (n == 0 && p->state == REF_PROFILER_STOPPED)
		return -EPIPE;
	return n;
}

ssize_t ref_profiler_read(struct ref_profiler *p, void *buf, size_t len)
{
	uint32_t cpu;
	uint64_t time;

	return do_read(p, buf, len, &cpu, &time);
}

ssize_t ref_profiler_read_sample(struct ref_profiler *p, void *buf, size_t len, uint32_t *cpu,
				 uint64_t *time)
{
	*cpu = 0;
	*time = 0;
	return do_read(p, buf, len, cpu, time);
}

ssize_t ref_profiler_view_sample(struct ref_profiler *p, void *buf, const void **data, size_t len,
				 uint32_t *cpu, uint64_t *time)
{
	ssize_t n;

	*cpu = 0;
	*time = 0;
	*data = buf;
	if (!p->ops->view)
		return do_read(p, buf, len, cpu, time);
	if (p->state != REF_PROFILER_RUNNING && p->state != REF_PROFILER_STOPPED)
		return refuse(p, REF_PROFILER_BAD_STATE);
	if (len == 0)
		return 0;
	n = p->ops->view(p, data, len, cpu, time);
	if (n == 0 && p->state == REF_PROFILER_STOPPED)
		return -EPIPE;
	return n;
}

int ref_profiler_reset(struct ref_profiler *p)
{
	if (p->state == REF_PROFILER_RUNNING)
		p->ops->stop(p, NULL);
	if (p->ops->reset)
		p->ops->reset(p);
	p->state = REF_PROFILER_IDLE;
	return 0;
}

void ref_profiler_free(struct ref_profiler *p)
{
	if (!p)
		return;
	ref_profiler_reset(p);
	if (p->ops->destroy)
		p->ops->destroy(p);
	free(p);
}

enum ref_profiler_fidl_error ref_profiler_fidl_error(const struct ref_profiler *p)
{
	return p->last;
}

uint64_t ref_profiler_period_ns(const struct ref_profiler *p)
{
	return p->sampling.period;
}

enum pecs_stream_format ref_profiler_output(const struct ref_profiler *p)
{
	return p->output;
}

int ref_profiler_stopped(const struct ref_profiler *p)
{
	return p->state == REF_PROFILER_STOPPED;
}
