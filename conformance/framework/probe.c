/* The startup probe of the call itself: an implementation without perf_event_open fails
 * every case that opens an event, and the reader should learn that from the first line
 * rather than from the root cause after hundreds of failures. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

int pecs_probe_missing(const struct pecs_impl *impl, const struct pecs_host_facts *facts,
		       char *line, size_t len)
{
	void *ctx = NULL;
	if (impl->setup(&ctx) < 0)
		return 0; /* every case says so itself, as BROKEN */
	struct pecs_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PECS_TYPE_SOFTWARE;
	a.config = PECS_SW_TASK_CLOCK;
	a.size = facts->attr_size ? facts->attr_size : PECS_ATTR_SIZE_VER0;
	if (a.size > sizeof(a))
		a.size = sizeof(a);
	/* User-only: what any caller may open at perf_event_paranoid 2. */
	a.flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	int fd = impl->open(ctx, &a, 0, -1, -1, 0);
	if (fd >= 0)
		impl->close(ctx, fd);
	impl->teardown(ctx);
	if (fd != -ENOSYS)
		return 0;
	snprintf(line, len, "perf_event_open is missing: %s answered the startup probe (a "
		 "user-only task clock) with ENOSYS, so every case that opens an event fails "
		 "with it", impl->name);
	return 1;
}
