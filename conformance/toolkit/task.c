/* See task.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/toolkit/task.h"

static int tell(struct pecs_t *t, uint32_t what, long nr, const uint64_t args[6], long ret,
		const char *comm)
{
	struct pecs_task_event te = {
		.size = sizeof(te),
		.what = what,
		.nr = (int32_t)nr,
		.ret = ret,
		.ip = (uint64_t)(uintptr_t)__builtin_return_address(0),
		.comm = comm,
	};

	if (args)
		memcpy(te.args, args, sizeof(te.args));
	return pecs_task_event(t, &te);
}

long pecs_task_syscall(struct pecs_t *t, long nr, const uint64_t args[6])
{
	long r;
	int err = tell(t, PECS_TASK_SYSCALL_ENTER, nr, args, 0, NULL);

	if (err)
		return err;
	r = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
	if (r < 0)
		r = -errno;
	err = tell(t, PECS_TASK_SYSCALL_EXIT, nr, NULL, r, NULL);
	return err ? err : r;
}

int pecs_task_set_name(struct pecs_t *t, const char *name)
{
	const uint64_t args[6] = {PR_SET_NAME, (uint64_t)(uintptr_t)name};
	long r;
	int err = tell(t, PECS_TASK_SYSCALL_ENTER, SYS_prctl, args, 0, NULL);

	if (err)
		return err;
	r = prctl(PR_SET_NAME, name, 0, 0, 0) ? -errno : 0;
	if (r == 0)
		err = tell(t, PECS_TASK_COMM, SYS_prctl, NULL, 0, name);
	if (!err)
		err = tell(t, PECS_TASK_SYSCALL_EXIT, SYS_prctl, NULL, r, NULL);
	return err ? err : (int)r;
}

static int slurp(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

int pecs_tracefs_syscall(const char *event, uint64_t *id, uint32_t *nargs)
{
	return pecs_tracefs_event("syscalls", event, id, nargs);
}

int pecs_tracefs_event(const char *system, const char *event, uint64_t *id, uint32_t *nargs)
{
	static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char path[256], buf[8192];
	int err = -EACCES;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/%s", roots[i], system);
		if (access(path, R_OK | X_OK))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], system, event);
		err = slurp(path, buf, sizeof(buf));
		if (err)
			return err == -EACCES ? err : -ENOENT;
		*id = strtoull(buf, NULL, 10);
		*nargs = 0;
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", roots[i], system, event);
		if (slurp(path, buf, sizeof(buf)) == 0)
			for (const char *p = buf; (p = strstr(p, "offset:")) != NULL; p += 7)
				if (strtol(p + 7, NULL, 10) >= 16)
					(*nargs)++;
		return 0;
	}
	return err;
}
