/* The syscalls:* and raw_syscalls:* tracepoints as the host's tracefs describes them: an
 * event's id (what attr.config names for PERF_TYPE_TRACEPOINT), the call it traces (any,
 * for raw_syscalls) and, for an entry, how many arguments its record carries. Ids are the
 * running kernel's, handed out at boot, so they are read from tracefs rather than known
 * in advance. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref/host/host.h"

#define ENTER "sys_enter_"
#define EXIT "sys_exit_"

static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

/* An entry record's arguments are the fields after __syscall_nr, one u64 each from
 * offset 16 on: the format file's fields at offset 16 and beyond. */
static uint32_t count_args(const char *dir, const char *name)
{
	char path[640], buf[8192];
	uint32_t n = 0;

	snprintf(path, sizeof(path), "%s/%s/format", dir, name);
	if (ref_host_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	for (const char *p = buf; (p = strstr(p, "offset:")) != NULL; p += 7)
		if (strtol(p + 7, NULL, 10) >= 16)
			n++;
	return n > 6 ? 6 : n;
}

/* The ids are handed out at boot and syscall tracepoints never come or go, so tracefs
 * is listed once per process: an open of an id no syscall has then costs a table walk,
 * not a read of every event's id file. Each tracepoint's format is read at its open. */
#define MAX_TPS 2048

struct tp_entry {
	uint32_t id;
	char name[48]; /* sys_enter_..., or sys_enter / sys_exit of raw_syscalls */
	int raw;       /* raw_syscalls */
};

static struct {
	pthread_once_t once;
	int err;        /* -EACCES when no tracefs could be read */
	const char *root;
	struct tp_entry *tps;
	size_t nr;
} cache = { .once = PTHREAD_ONCE_INIT, .err = -EACCES };

/* raw_syscalls:sys_enter and sys_exit: struct trace_event_raw_sys_enter holds the call's
 * long id at 8 and its six arguments at 16, _exit the id and the long ret. */
static void list_raw(const char *root)
{
	static const char *const names[] = {"sys_enter", "sys_exit"};
	char path[512], buf[32];

	for (size_t i = 0; i < 2 && cache.tps && cache.nr < MAX_TPS; i++) {
		struct tp_entry *e = &cache.tps[cache.nr];

		snprintf(path, sizeof(path), "%s/events/raw_syscalls/%s/id", root, names[i]);
		if (ref_host_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		e->id = (uint32_t)strtoul(buf, NULL, 10);
		strcpy(e->name, names[i]);
		e->raw = 1;
		cache.nr++;
	}
}

static int list(const char *root)
{
	char dir[128], path[512], buf[32];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/events/syscalls", root);
	d = opendir(dir);
	if (!d)
		return -EACCES;
	cache.tps = calloc(MAX_TPS, sizeof(*cache.tps));
	while (cache.tps && cache.nr < MAX_TPS && (de = readdir(d)) != NULL) {
		struct tp_entry *e = &cache.tps[cache.nr];

		if ((strncmp(de->d_name, ENTER, strlen(ENTER)) != 0 &&
		     strncmp(de->d_name, EXIT, strlen(EXIT)) != 0) ||
		    strlen(de->d_name) >= sizeof(e->name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/id", dir, de->d_name);
		if (ref_host_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		e->id = (uint32_t)strtoul(buf, NULL, 10);
		strcpy(e->name, de->d_name);
		cache.nr++;
	}
	closedir(d);
	list_raw(root);
	return 0;
}

static void load(void)
{
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && cache.err; i++) {
		cache.err = list(roots[i]);
		if (!cache.err)
			cache.root = roots[i];
	}
}

int ref_host_syscall_tp(uint64_t id, struct ref_syscall_tp *tp)
{
	char dir[128];

	memset(tp, 0, sizeof(*tp));
	pthread_once(&cache.once, load);
	if (cache.err)
		return cache.err;
	for (size_t i = 0; i < cache.nr; i++) {
		const char *name = cache.tps[i].name;

		if (cache.tps[i].id != id)
			continue;
		tp->type = (uint16_t)id;
		if (cache.tps[i].raw) {
			tp->any = 1;
			tp->nr = -1;
			tp->exit = strcmp(name, "sys_exit") == 0;
			tp->nargs = tp->exit ? 0 : 6;
			return 0;
		}
		tp->exit = strncmp(name, EXIT, strlen(EXIT)) == 0;
		tp->nr = ref_host_syscall_nr(name + (tp->exit ? strlen(EXIT) : strlen(ENTER)));
		snprintf(dir, sizeof(dir), "%s/events/syscalls", cache.root);
		tp->nargs = tp->exit ? 0 : count_args(dir, name);
		return 0;
	}
	return -ENOENT;
}
