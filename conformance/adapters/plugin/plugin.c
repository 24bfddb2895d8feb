/* An implementation in a shared object: the runner loads $PECS_PLUGIN (the standalone
 * runner's --plugin PATH sets it) and asks it for its vtable.
 *
 * The object exports one function,
 *
 *     const struct pecs_impl *pecs_plugin_impl(void);
 *
 * A function rather than a data symbol so that a plugin can build its vtable at load time
 * (read its own configuration, pick entries) and so that a data symbol of the wrong type
 * cannot be mistaken for one. Every refusal ends the run with exit status 2 and one line
 * saying what to fix: a run against the wrong object must never look like a result.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/impl.h"

#define PLUGIN_SYMBOL "pecs_plugin_impl"

typedef const struct pecs_impl *(*plugin_entry_fn)(void);

static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void refuse(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "pecs: plugin: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* A plugin is code the suite did not build: one crash must cost one case, not the run. */
int pecs_adapter_isolates(void)
{
	return 1;
}

const struct pecs_impl *pecs_adapter(void)
{
	static const struct pecs_impl *impl;
	if (impl)
		return impl;
	const char *path = getenv("PECS_PLUGIN");
	if (!path || !*path)
		refuse("no plugin given: pass --plugin PATH or set PECS_PLUGIN");
	/* dlopen() searches the library path for a bare name; a plugin is a file the user
	 * named, so insist on a path and report a missing file as such. */
	char where[4096];
	snprintf(where, sizeof(where), "%s%s", strchr(path, '/') ? "" : "./", path);
	/* RTLD_NOW: an unresolved symbol is a load error now, not a crash in some case. */
	void *so = dlopen(where, RTLD_NOW | RTLD_LOCAL);
	if (!so)
		refuse("cannot load %s: %s", path, dlerror());
	dlerror();
	plugin_entry_fn entry = (plugin_entry_fn)dlsym(so, PLUGIN_SYMBOL);
	const char *err = dlerror();
	if (err || !entry)
		refuse("%s does not export " PLUGIN_SYMBOL "(): %s (a plugin defines "
		       "'const struct pecs_impl *" PLUGIN_SYMBOL "(void)', see docs/implementing.md)",
		       path, err ? err : "symbol is NULL");
	const struct pecs_impl *got = entry();
	char msg[512];
	if (pecs_impl_check(got, msg, sizeof(msg)) < 0)
		refuse("refusing %s: %s", path, msg);
	impl = got;
	return impl;
}
