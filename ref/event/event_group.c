/* Group membership: a leader's list of members, kept with the count of each read_format
 * among them, and the one way in and out of it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ref/event/event.h"

int ref_event_group_add(struct ref_event *leader, struct ref_event *ev)
{
	if (leader->nr_siblings == leader->cap_siblings) {
		uint32_t cap = leader->cap_siblings ? leader->cap_siblings * 2 : 4;
		struct ref_event **n = realloc(leader->siblings, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		leader->siblings = n;
		leader->cap_siblings = cap;
	}
	leader->siblings[leader->nr_siblings++] = ev;
	leader->sibling_formats[ev->attr.read_format]++;
	ev->leader = leader;
	return 0;
}

/* perf_group_detach(): a member leaves its group; a leader's members become
 * singletons, each leading itself from now on. */
void ref_event_group_detach(struct ref_event *ev, struct ref_defer *d)
{
	struct ref_event *leader = ev->leader;

	/* A member leaving changes no one else's times, so only it is brought up to date;
	 * syncing the whole group here made closing an N-event group read N^2/2 clocks. A
	 * leader leaving turns every member into a singleton with a new running state, so
	 * each of them is synced once under the old one first. */
	if (leader != ev) {
		ref_event_sync(ev);
		for (uint32_t i = 0; i < leader->nr_siblings; i++) {
			if (leader->siblings[i] == ev) {
				memmove(&leader->siblings[i], &leader->siblings[i + 1],
					(leader->nr_siblings - i - 1) * sizeof(*leader->siblings));
				leader->nr_siblings--;
				leader->sibling_formats[ev->attr.read_format]--;
				break;
			}
		}
		ev->leader = ev;
		return;
	}
	ref_event_sync_group(ev);
	for (uint32_t i = 0; i < ev->nr_siblings; i++) {
		struct ref_event *s = ev->siblings[i];

		s->leader = s;
		ref_event_schedule(s, d);
	}
	ev->nr_siblings = 0;
	memset(ev->sibling_formats, 0, sizeof(ev->sibling_formats));
}

