/* A plugin that forwards every call to this kernel, with one regression on demand: with
 * PECS_BREAK_RESET=1 in its environment, PERF_EVENT_IOC_RESET answers EINVAL. Two runs of
 * it, with and without, are what `pecs_harness diff` is for: the diff must name the cases
 * that reset a counter, and nothing else. With PECS_HANG_FACTS=1 its host_facts never
 * returns, as an emulator whose first perf_event_open blocks: the runner's --timeout must
 * end the startup.
 *
 * Everything but those two calls is the syscall adapter's own, so that the only difference
 * between this plugin and the kernel runner is the one the diff is meant to find. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pecs/impl.h"

const struct pecs_impl *pecs_adapter_syscall(void);

static struct pecs_impl reset_break;

static int env_is_1(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "1") == 0;
}

static int rb_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	/* The kernel ignores the upper half of the request; so does the break. */
	if (env_is_1("PECS_BREAK_RESET") && (unsigned)request == PECS_IOC_RESET)
		return -EINVAL;
	return pecs_adapter_syscall()->ioctl(ctx, fd, request, arg);
}

static int rb_host_facts(void *ctx, struct pecs_host_facts *facts)
{
	while (env_is_1("PECS_HANG_FACTS"))
		pause();
	return pecs_adapter_syscall()->host_facts(ctx, facts);
}

const struct pecs_impl *pecs_plugin_impl(void)
{
	/* The runner asks once, before any case runs, so the copy needs no lock. */
	if (!reset_break.size) {
		reset_break = *pecs_adapter_syscall();
		reset_break.name = "reset_break";
		reset_break.ioctl = rb_ioctl;
		reset_break.host_facts = rb_host_facts;
	}
	return &reset_break;
}
