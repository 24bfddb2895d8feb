/* The implementation behind the events, chosen by PECS_IMPL at the first
 * perf_event_open, not at load: a program that never opens an event never meets it, and
 * the plugin is loaded after the program's own constructors have run. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/framework/impl_check.h"
#include "interpose/interpose.h"
#include "pecs/interpose.h"

#define PLUGIN_SYMBOL "pecs_plugin_impl"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const struct pecs_impl *chosen;
static void *chosen_ctx;
static int chosen_err;

static void complain(const char *what, const char *detail)
{
	fprintf(stderr, "pecs-interpose: %s%s%s; perf_event_open fails with ENOSYS\n", what,
		detail ? ": " : "", detail ? detail : "");
}

static const struct pecs_impl *load_plugin(const char *path)
{
	void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!so) {
		complain("cannot load the plugin", dlerror());
		return NULL;
	}
	const struct pecs_impl *(*entry)(void) =
		(const struct pecs_impl *(*)(void))dlsym(so, PLUGIN_SYMBOL);
	if (!entry) {
		complain(path, "does not export " PLUGIN_SYMBOL "()");
		return NULL;
	}
	return entry();
}

static void choose(void)
{
	const char *want = getenv(PECS_INTERPOSE_ENV);
	const struct pecs_impl *impl;
	char why[256];

	if (!want || !*want || strcmp(want, PECS_INTERPOSE_REF) == 0) {
		impl = pecs_adapter(); /* the ref adapter linked into this library */
	} else if (strcmp(want, PECS_INTERPOSE_KERNEL) == 0) {
		return; /* chosen stays NULL: everything passes through */
	} else if (!strchr(want, '/')) {
		complain("PECS_IMPL is not ref, kernel or a path to a plugin", want);
		chosen_err = PECS_INTERPOSE_BROKEN_ERRNO;
		return;
	} else {
		impl = load_plugin(want);
	}
	if (!impl) {
		chosen_err = PECS_INTERPOSE_BROKEN_ERRNO;
		return;
	}
	if (pecs_impl_check(impl, why, sizeof(why)) < 0) {
		complain("the implementation's vtable is refused", why);
		chosen_err = PECS_INTERPOSE_BROKEN_ERRNO;
		return;
	}
	int r = impl->setup(&chosen_ctx);

	if (r < 0) {
		complain("the implementation's setup failed", strerror(-r));
		chosen_err = -r;
		return;
	}
	chosen = impl;
}

const struct pecs_impl *ip_impl(void **ctx, int *err)
{
	pthread_once(&once, choose);
	*ctx = chosen_ctx;
	*err = chosen_err;
	return chosen;
}
