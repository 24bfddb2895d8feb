/* The calls a live profiler makes on the event it feeds (ref.h): its samples and losses
 * go through the same delivery path as an overflow, under the engine lock. */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include "pecs/opts.h"
#include "ref/event/event.h"
#include "ref/ring/ring.h"

int ref_event_deliver_sample(struct ref_event *ev, const struct pecs_sample *s)
{
	struct ref_event_env *env = ev->env;
	int ret;

	pthread_mutex_lock(&env->lock);
	ret = ev->injected ? REF_DELIVER_OFF : ref_event_deliver_locked(ev, s);
	pthread_mutex_unlock(&env->lock);
	return ret;
}

int ref_event_deliver_lost(struct ref_event *ev, uint64_t nr)
{
	struct ref_event_env *env = ev->env;

	if (!nr)
		return 0;
	pthread_mutex_lock(&env->lock);
	if (!ref_attr_is_sampling(&ev->attr)) {
		pthread_mutex_unlock(&env->lock);
		return -EINVAL;
	}
	if (!ev->injected)
		ref_event_lost_locked(ev, nr);
	pthread_mutex_unlock(&env->lock);
	return 0;
}

int ref_event_get_info(struct ref_event *ev, struct ref_event_info *info)
{
	struct ref_event_env *env = ev->env;

	pthread_mutex_lock(&env->lock);
	*info = (struct ref_event_info){
		.id = ev->id,
		.period = ev->period,
		.sample_type = ev->attr.sample_type,
		.pid = ev->pid == -1 ? -1 : (ev->same_process ? getpid() : ev->tid),
		.tid = ev->tid,
		.cpu = ev->cpu,
		.max_stack = ev->attr.sample_max_stack,
		.type = ev->attr.type,
		.config = ev->attr.config,
		.sigtrap = (ev->attr.flags & PECS_ATTR_SIGTRAP) != 0,
		.sig_data = ev->attr.sig_data,
		.stack_user = ev->attr.sample_stack_user,
	};
	pthread_mutex_unlock(&env->lock);
	return 0;
}
