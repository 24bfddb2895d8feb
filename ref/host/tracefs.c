/* The syscalls:* tracepoints as the host's tracefs describes them: an event's id (what
 * attr.config names for PERF_TYPE_TRACEPOINT), the call it traces and, for an entry, how
 * many arguments its record carries. Ids are the running kernel's, handed out at boot, so
 * they are looked up at each open rather than known in advance. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref/host/host.h"

#define ENTER "sys_enter_"
#define EXIT "sys_exit_"

static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

/* The file's first bytes, NUL-terminated; its length or -1. */
static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return -1;
	while ((size_t)len + 1 < cap && (n = read(fd, buf + len, cap - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* An entry record's arguments are the fields after __syscall_nr, one u64 each from
 * offset 16 on: the format file's fields at offset 16 and beyond. */
static uint32_t count_args(const char *dir, const char *name)
{
	char path[640], buf[8192];
	uint32_t n = 0;

	snprintf(path, sizeof(path), "%s/%s/format", dir, name);
	if (slurp(path, buf, sizeof(buf)) < 0)
		return 0;
	for (const char *p = buf; (p = strstr(p, "offset:")) != NULL; p += 7)
		if (strtol(p + 7, NULL, 10) >= 16)
			n++;
	return n > 6 ? 6 : n;
}

static int scan(const char *root, uint64_t id, struct ref_syscall_tp *tp)
{
	char dir[128], path[512], buf[32];
	struct dirent *de;
	DIR *d;
	int found = -ENOENT;

	snprintf(dir, sizeof(dir), "%s/events/syscalls", root);
	d = opendir(dir);
	if (!d)
		return -EACCES;
	while (found && (de = readdir(d)) != NULL) {
		int exit = strncmp(de->d_name, EXIT, strlen(EXIT)) == 0;

		if (!exit && strncmp(de->d_name, ENTER, strlen(ENTER)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/id", dir, de->d_name);
		if (slurp(path, buf, sizeof(buf)) <= 0 || strtoull(buf, NULL, 10) != id)
			continue;
		tp->type = (uint16_t)id;
		tp->exit = exit;
		tp->nr = ref_host_syscall_nr(de->d_name + (exit ? strlen(EXIT) : strlen(ENTER)));
		tp->nargs = exit ? 0 : count_args(dir, de->d_name);
		found = 0;
	}
	closedir(d);
	return found;
}

int ref_host_syscall_tp(uint64_t id, struct ref_syscall_tp *tp)
{
	int err = -ENOENT;

	memset(tp, 0, sizeof(*tp));
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		err = scan(roots[i], id, tp);
		if (err != -EACCES)
			return err;
	}
	return err;
}
