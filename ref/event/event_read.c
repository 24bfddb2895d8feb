/* read(2) on an event fd: the read_format layouts, single and PERF_FORMAT_GROUP. */
#include <errno.h>
#include <stdlib.h>

#include "ref/event/event.h"
#include "ref/policy/policy.h"
#include "ref/uaccess/uaccess.h"

int ref_event_read_values(struct ref_event *ev, struct ref_read_values *v,
			  struct ref_read_member **members)
{
	struct ref_event *leader = ev->leader;
	struct ref_read_member *m;
	uint32_t nr;

	if (!(ev->attr.read_format & PECS_FORMAT_GROUP)) {
		ref_event_sync(ev);
		m = malloc(sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->value = ev->count;
		m->id = ev->id;
		m->lost = ev->lost;
		v->time_enabled = ev->time_enabled;
		v->time_running = ev->time_running;
		v->nr = 1;
		v->members = m;
		*members = m;
		return 0;
	}
	/* A group read reports the leader's times and every member's own id, leader first,
	 * whichever member's fd it came through (perf_read_group()). */
	ref_event_sync_group(leader);
	nr = 1 + leader->nr_siblings;
	m = calloc(nr, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		struct ref_event *s = i ? leader->siblings[i - 1] : leader;

		m[i].value = s->count;
		m[i].id = s->id;
		m[i].lost = s->lost;
	}
	v->time_enabled = leader->time_enabled;
	v->time_running = leader->time_running;
	v->nr = nr;
	v->members = m;
	*members = m;
	return 0;
}

ssize_t ref_event_read(struct ref_event *ev, void *buf, size_t count)
{
	uint64_t rf = ev->attr.read_format;
	struct ref_read_values v;
	struct ref_read_member *m;
	uint32_t nr = (rf & PECS_FORMAT_GROUP) ? 1 + ev->leader->nr_siblings : 1;
	size_t size = ref_record_read_size(rf, nr);
	ssize_t ret;
	void *out;

	ret = ref_policy_allow_read(&ev->env->policy);
	if (ret)
		return ret;
	/* The size check comes before anything is read, so a short buffer changes nothing. */
	if (count < size)
		return -ENOSPC;
	/* Built aside, then copied out: the caller's buffer may fault part way. */
	out = malloc(size);
	if (!out)
		return -ENOMEM;
	ret = ref_event_read_values(ev, &v, &m);
	if (!ret) {
		ret = ref_record_read_encode(rf, &v, out, size);
		free(m);
	}
	if (ret > 0 && ref_uaccess_copy_to_user(buf, out, (size_t)ret))
		ret = -EFAULT;
	free(out);
	return ret;
}
