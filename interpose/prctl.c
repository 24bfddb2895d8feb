/* prctl(2). Every call is reported for syscalls:sys_{enter,exit}_prctl (task.c), and two
 * options change what the implementation does between the two:
 * - PR_SET_NAME: __set_task_comm() raises PERF_RECORD_COMM for the new name;
 * - PR_TASK_PERF_EVENTS_DISABLE / _ENABLE: the events the calling thread opened stop or
 *   start, wherever they count (perf_event_task_disable/enable). An implementation with a
 *   task_event entry is told, on the calling thread, and knows which thread opened each
 *   event. One without it gets IOC_DISABLE / IOC_ENABLE on every event of the table, the
 *   most the seam lets the interposer say: events other threads opened switch as well.
 * The kernel's prctl runs in any case, for its own events and its answer. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "interpose/interpose.h"

struct toggle {
	const struct pecs_impl *impl;
	void *ctx;
	unsigned long request;
};

static void toggle_one(int ifd, void *arg)
{
	struct toggle *t = arg;

	t->impl->ioctl(t->ctx, ifd, t->request, 0);
}

static void toggle_all(int on)
{
	struct toggle t = {.request = on ? PECS_IOC_ENABLE : PECS_IOC_DISABLE};
	int err;

	t.impl = ip_impl(&t.ctx, &err);
	if (t.impl)
		ip_table_each(toggle_one, &t);
}

int prctl(int option, ...)
{
	va_list ap;
	unsigned long a[4];

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	struct ip_task_call c;
	unsigned long args[6] = {(unsigned long)option, a[0], a[1], a[2], a[3]};

	ip_task_enter(&c, SYS_prctl, args, __builtin_return_address(0));
	int r = ip_real()->prctl(option, a[0], a[1], a[2], a[3]);

	if (r == 0 && option == PR_SET_NAME)
		ip_task_comm(&c, (const char *)a[0]);
	if (r == 0 && (option == PR_TASK_PERF_EVENTS_ENABLE ||
		       option == PR_TASK_PERF_EVENTS_DISABLE)) {
		int on = option == PR_TASK_PERF_EVENTS_ENABLE;

		if (!ip_task_perf_events(&c, on) && ip_table_count() > 0)
			toggle_all(on);
	}
	return (int)ip_task_exit(&c, r);
}
