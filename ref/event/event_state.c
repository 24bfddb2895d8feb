/* Event lifetime, enable state, time accounting and group membership. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ref/event/event.h"
#include "ref/ring/ring.h"

void ref_event_get(struct ref_event *ev)
{
	ev->refs++;
}

/* The hooks that run on a live event take a reference for the time they wait. */
static int holds_ref(int what)
{
	return what == REF_DEFER_START || what == REF_DEFER_STOP ||
	       what == REF_DEFER_RECONFIGURE || what == REF_DEFER_PROVIDE;
}

void ref_event_defer_add(struct ref_defer *d, struct ref_event *ev, int what)
{
	if (d->nr == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct ref_defer_item *n = realloc(d->items, cap * sizeof(*n));

		if (!n) {
			/* Losing a hook only loses a profiler notification, not state. */
			d->oom = 1;
			return;
		}
		d->items = n;
		d->cap = cap;
	}
	if (holds_ref(what))
		ref_event_get(ev);
	d->items[d->nr].ev = ev;
	d->items[d->nr].what = what;
	d->nr++;
}

/* Folds the time since the last sync into the counters, by the state the event was in.
 * A member's times move only while its group is scheduled, that is while its leader is
 * enabled too (measured: an enabled member of a disabled leader reads time_enabled 0). */
void ref_event_sync(struct ref_event *ev)
{
	struct ref_event *leader = ev->leader ? ev->leader : ev;

	if (leader->exec.armed || leader->exec.remove)
		ref_event_exec_check(leader);
	if (ev->exec.armed || ev->exec.remove)
		ref_event_exec_check(ev);
	uint64_t t = ref_event_source_read(&ev->tsrc), c;

	/* task-clock counts what its times measure: one reading serves both (and a
	 * second clock read per sync is what group enable and close spend most on). */
	if (ev->csrc.kind == ev->tsrc.kind && ev->csrc.clock == ev->tsrc.clock &&
	    ev->csrc.tid == ev->tsrc.tid)
		c = ev->csrc.last = ev->tsrc.last;
	else
		c = ref_event_source_read(&ev->csrc);

	if (ev->on && leader->on)
		ev->time_enabled += t - ev->t_last;
	/* An event bound to one CPU runs only while its task is on that CPU. */
	if (ev->running && ref_event_source_on_cpu(ev->tid, ev->cpu)) {
		ev->time_running += t - ev->t_last;
		ev->count += c - ev->c_last;
	}
	ev->t_last = t;
	ev->c_last = c;
}

void ref_event_sync_group(struct ref_event *leader)
{
	ref_event_sync(leader);
	for (uint32_t i = 0; i < leader->nr_siblings; i++)
		ref_event_sync(leader->siblings[i]);
}

void ref_event_update_userpage(struct ref_event *ev)
{
	/* Only the event that created a buffer publishes its times there, as the kernel's
	 * perf_event_update_userpage() writes through the event's own rb. */
	if (ev->rb && ev->rb->owner == ev)
		ref_ring_update_userpage(ev->rb->ring, (int64_t)ev->count, ev->time_enabled,
					 ev->time_running);
}

/* A sampling event that first runs with no profiler gets one from the engine's
 * provider: the choice belongs to the engine, not to whoever enabled it. */
static int wants_provider(const struct ref_event *ev)
{
	return ev->env->provider.attach && !ev->provider_asked && !ev->injected &&
	       ref_attr_is_sampling(&ev->attr);
}

/* Recomputes who runs after a state change in the group and queues profiler hooks for
 * every event whose running state flipped. */
static void reschedule_one(struct ref_event *leader, struct ref_event *ev, struct ref_defer *d)
{
	int run = ev->on && leader->on;

	if (!d) {
		/* From a delivery: no hook can run (see ref_event_schedule()). */
	} else if (run != ev->running && ev->has_sampler) {
		ref_event_defer_add(d, ev, run ? REF_DEFER_START : REF_DEFER_STOP);
	} else if (run && !ev->running && wants_provider(ev)) {
		ev->provider_asked = 1;
		ref_event_defer_add(d, ev, REF_DEFER_PROVIDE);
	}
	ev->running = run;
	ref_event_update_userpage(ev);
}

int ref_event_attach_sampler(struct ref_event *ev, const struct ref_sampler_ops *ops, void *priv,
			     struct ref_defer *d)
{
	if (ev->has_sampler)
		return -EBUSY;
	if (!ref_attr_is_sampling(&ev->attr))
		return -EINVAL;
	ev->ops = *ops;
	ev->priv = priv;
	ev->has_sampler = 1;
	ev->provider_asked = 1;
	/* An event already running starts its profiler now. */
	if (ev->running)
		ref_event_defer_add(d, ev, REF_DEFER_START);
	return 0;
}

/* Runs without the engine lock: the provider may ask the event about itself. A profiler
 * attached meanwhile (set_profiler) wins, and the provided one is released unused. */
static void provide(struct ref_event_env *env, struct ref_event *ev, struct ref_defer *d)
{
	struct ref_sampler_ops ops = { 0 };
	void *priv = NULL;
	int err = env->provider.attach(env->provider.arg, ev, &ops, &priv);

	if (err)
		return;
	pthread_mutex_lock(&env->lock);
	err = ref_event_attach_sampler(ev, &ops, priv, d);
	pthread_mutex_unlock(&env->lock);
	if (err && ops.release)
		ops.release(priv);
}

void ref_event_schedule(struct ref_event *ev, struct ref_defer *d)
{
	/* A member's state decides only its own running state; a leader's decides its
	 * whole group's. */
	if (ev->leader != ev) {
		reschedule_one(ev->leader, ev, d);
		return;
	}
	for (uint32_t i = 0; i <= ev->nr_siblings; i++)
		reschedule_one(ev, i ? ev->siblings[i - 1] : ev, d);
}

void ref_event_set_on(struct ref_event *ev, int on, struct ref_defer *d)
{
	/* Only the events whose times the change moves are synced: syncing the whole
	 * group for each member made enabling an N-event group read N^2/2 clocks. */
	if (ev->leader != ev)
		ref_event_sync(ev);
	else
		ref_event_sync_group(ev);
	ev->on = on;
	ref_event_schedule(ev, d);
}

void ref_event_enable(struct ref_event *ev, struct ref_defer *d)
{
	/* remove_on_exec's event is in its EXIT state: _perf_event_enable() leaves it. */
	if (ev->on || ev->exec.removed)
		return;
	ref_event_resolve_task(ev);
	ref_event_set_on(ev, 1, d);
}

void ref_event_disable(struct ref_event *ev, struct ref_defer *d)
{
	if (!ev->on)
		return;
	ref_event_set_on(ev, 0, d);
}

/* Zeroes the count only: time_enabled and time_running carry on (measured). */
void ref_event_reset(struct ref_event *ev)
{
	ref_event_sync(ev);
	ev->count = 0;
	ref_event_update_userpage(ev);
}

static void reset_fn(struct ref_event *ev, struct ref_defer *d)
{
	(void)d;
	ref_event_reset(ev);
}

void ref_event_for_group(struct ref_event *ev, int group,
			 void (*fn)(struct ref_event *, struct ref_defer *), struct ref_defer *d)
{
	struct ref_event *leader = ev->leader;

	if (!fn)
		fn = reset_fn;
	if (!group) {
		fn(ev, d);
		return;
	}
	fn(leader, d);
	for (uint32_t i = 0; i < leader->nr_siblings; i++)
		fn(leader->siblings[i], d);
}

static void event_release(struct ref_event *ev, struct ref_defer *d)
{
	ref_event_trace_remove(ev);
	ref_event_group_detach(ev, d);
	if (ev->running && ev->has_sampler)
		ref_event_defer_add(d, ev, REF_DEFER_STOP_LAST);
	ev->on = ev->running = 0;
	ref_event_rb_detach(ev);
	free(ev->siblings);
	ev->siblings = NULL;
	ref_event_source_fini(&ev->tsrc);
	ref_event_source_fini(&ev->csrc);
	if (ev->has_sampler) {
		/* The release hook frees ev once the stop hooks queued before it ran. */
		ref_event_defer_add(d, ev, REF_DEFER_RELEASE);
		return;
	}
	free(ev);
}

void ref_event_put(struct ref_event *ev, struct ref_defer *d)
{
	if (--ev->refs)
		return;
	event_release(ev, d);
}

void ref_event_defer_run(struct ref_event_env *env, struct ref_defer *d)
{
	/* Putting the hooks' references may release events and queue more hooks. */
	while (d->nr) {
		struct ref_defer batch = *d;

		memset(d, 0, sizeof(*d));
		pthread_mutex_unlock(&env->lock);
		for (size_t i = 0; i < batch.nr; i++) {
			struct ref_event *ev = batch.items[i].ev;

			switch (batch.items[i].what) {
			case REF_DEFER_START:
				if (ev->ops.start)
					ev->ops.start(ev->priv, ev);
				break;
			case REF_DEFER_STOP:
			case REF_DEFER_STOP_LAST:
				/* Deliveries during stop are samples taken while it ran. */
				pthread_mutex_lock(&env->lock);
				ev->draining++;
				pthread_mutex_unlock(&env->lock);
				if (ev->ops.stop)
					ev->ops.stop(ev->priv, ev);
				pthread_mutex_lock(&env->lock);
				ev->draining--;
				pthread_mutex_unlock(&env->lock);
				break;
			case REF_DEFER_RECONFIGURE:
				if (ev->ops.reconfigure)
					ev->ops.reconfigure(ev->priv, ev);
				break;
			case REF_DEFER_PROVIDE:
				provide(env, ev, d);
				break;
			case REF_DEFER_RELEASE:
				if (ev->ops.release)
					ev->ops.release(ev->priv);
				free(ev);
				break;
			}
		}
		pthread_mutex_lock(&env->lock);
		for (size_t i = 0; i < batch.nr; i++) {
			if (holds_ref(batch.items[i].what))
				ref_event_put(batch.items[i].ev, d);
		}
		free(batch.items);
	}
	free(d->items);
	memset(d, 0, sizeof(*d));
}
