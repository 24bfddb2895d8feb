/* A task's proc(5) stat line: the fields the engine counts from, and the comm an exec
 * changes. One reader, because the comm may hold spaces and parentheses: the fields are
 * only found after the last ')'. And its schedstat, the runtime of a thread whose CPU
 * clock this process may not read. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref/host/host.h"

/* name is "stat" or "schedstat". */
static int read_task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)tid, name);
	n = ref_host_read_file(path, buf, cap);
	return n < 0 ? (int)n : 0;
}

int ref_host_stat_field(pid_t pid, pid_t tid, int field, uint64_t *out, char *state)
{
	char buf[1024], *p;
	int err = read_task_file(pid, tid, "stat", buf, sizeof(buf));

	if (err)
		return err;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	if (state)
		*state = *p;
	for (int i = 3; i < field && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || !*p)
		return -EINVAL;
	if (out)
		*out = (uint64_t)strtoll(p, NULL, 10);
	return 0;
}

int ref_host_stat_comm(pid_t tid, char *comm, size_t len)
{
	char buf[1024], *open, *close;
	size_t n;
	int err = read_task_file(0, tid, "stat", buf, sizeof(buf));

	if (err)
		return err;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || !len)
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= len)
		n = len - 1;
	memcpy(comm, open + 1, n);
	comm[n] = 0;
	return 0;
}

int ref_host_schedstat_ns(pid_t pid, pid_t tid, uint64_t *ns)
{
	char buf[128], *end;
	int err = read_task_file(pid, tid, "schedstat", buf, sizeof(buf));

	if (err)
		return err;
	*ns = strtoull(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}
