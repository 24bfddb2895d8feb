/* Live samples reach an event through its profiler some time after they were taken;
 * Linux writes each at its overflow. Before a call whose outcome depends on the samples
 * taken before it, the engine has the profilers deliver them (ref_sampler_ops.flush),
 * so state changes apply to samples in the order they were taken. */
#include <stdint.h>

#include "ref/engine/engine.h"

/* Whose samples a call must see written before it acts. */
enum flush_scope {
	FLUSH_NONE,
	FLUSH_EVENT,
	FLUSH_GROUP, /* the event's whole group: a group read, FLAG_GROUP */
	FLUSH_RING,  /* every event writing into the event's ring: PAUSE_OUTPUT, poll */
};

#define FLUSH_MAX 64

static size_t collect(struct ref_event *ev, enum flush_scope scope, struct ref_event **out)
{
	struct ref_event *leader = ev->leader;
	size_t n = 0;

	switch (scope) {
	case FLUSH_NONE:
		break;
	case FLUSH_EVENT:
		out[n++] = ev;
		break;
	case FLUSH_GROUP:
		for (size_t i = 0; i <= leader->nr_siblings && n < FLUSH_MAX; i++)
			out[n++] = i ? leader->siblings[i - 1] : leader;
		break;
	case FLUSH_RING:
		if (!ev->rb) {
			out[n++] = ev;
			break;
		}
		for (size_t i = 0; i < ev->rb->nr_events && n < FLUSH_MAX; i++)
			out[n++] = ev->rb->events[i];
		break;
	}
	return n;
}

/* Runs the flush hooks with the engine lock dropped (they deliver through it), each
 * event held by a reference so a concurrent close cannot free it underneath. */
static void flush(struct ref_engine *e, int fd, enum flush_scope scope)
{
	struct ref_event *evs[FLUSH_MAX], *ev;
	struct ref_defer d = {0};
	size_t n = 0, kept = 0;

	if (scope == FLUSH_NONE)
		return;
	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	if (ev)
		n = collect(ev, scope, evs);
	for (size_t i = 0; i < n; i++) {
		if (evs[i]->has_sampler && evs[i]->ops.flush) {
			ref_event_get(evs[i]);
			evs[kept++] = evs[i];
		}
	}
	pthread_mutex_unlock(&e->env.lock);
	if (!kept)
		return;
	for (size_t i = 0; i < kept; i++)
		evs[i]->ops.flush(evs[i]->priv, evs[i]);
	pthread_mutex_lock(&e->env.lock);
	for (size_t i = 0; i < kept; i++)
		ref_event_put(evs[i], &d);
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
}

void ref_engine_flush_for_ioctl(struct ref_engine *e, int fd, unsigned long request,
				unsigned long arg)
{
	int group = ((uint32_t)arg & PECS_IOC_FLAG_GROUP) != 0;

	switch ((unsigned int)request) {
	case PECS_IOC_RESET:
		/* PERF_SAMPLE_READ of a sample taken before the reset shows the old count. */
		flush(e, fd, group ? FLUSH_GROUP : FLUSH_EVENT);
		break;
	case PECS_IOC_REFRESH:    /* samples taken while it was off stay dropped */
	case PECS_IOC_PERIOD:     /* earlier samples carry the earlier period */
	case PECS_IOC_SET_OUTPUT: /* earlier samples belong to the earlier ring */
		flush(e, fd, FLUSH_EVENT);
		break;
	case PECS_IOC_PAUSE_OUTPUT: /* the ring's state, whichever event wrote */
		flush(e, fd, FLUSH_RING);
		break;
	default:
		/* DISABLE drains through the stop hook; the rest touch no sample. */
		break;
	}
}

void ref_engine_flush_for_read(struct ref_engine *e, int fd)
{
	enum flush_scope scope = FLUSH_NONE;
	struct ref_event *ev;

	pthread_mutex_lock(&e->env.lock);
	ev = ref_engine_fd_lookup(e, fd);
	if (ev)
		scope = (ev->attr.read_format & PECS_FORMAT_GROUP) ? FLUSH_GROUP : FLUSH_EVENT;
	pthread_mutex_unlock(&e->env.lock);
	flush(e, fd, scope);
}

void ref_engine_flush_ring(struct ref_engine *e, int fd)
{
	flush(e, fd, FLUSH_RING);
}
