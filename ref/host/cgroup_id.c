/* The perf_event cgroup of a task: which hierarchy the controller is on (/proc/cgroups),
 * the task's path in it (/proc/<task>/cgroup), where that hierarchy is mounted
 * (/proc/self/mountinfo), then the directory's kernfs id from its file handle. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ref/host/host.h"

/* kernfs gives every hierarchy's root the first id. */
#define CGROUP_ROOT_ID 1

/* The perf_event controller's hierarchy number: 0 for the unified (v2) hierarchy. */
static int perf_event_hierarchy(void)
{
	char line[256], name[64];
	int hier = -ENOENT, h;
	FILE *f = fopen("/proc/cgroups", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d", name, &h) == 2 && !strcmp(name, "perf_event"))
			hier = h;
	fclose(f);
	return hier;
}

/* The task's path in hierarchy `hier`, into path. */
static int task_cgroup_path(pid_t task, int hier, char *path, size_t cap)
{
	char file[64], *line = NULL, *p, *end;
	size_t len = 0;
	int ret = -ENOENT;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)task);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (getline(&line, &len, f) > 0) {
		long h = strtol(line, &end, 10);

		if (end == line || *end != ':' || h != hier)
			continue;
		/* hierarchy:controllers:path, where the path may itself hold ':' */
		p = strchr(end + 1, ':');
		if (!p)
			continue;
		p++;
		p[strcspn(p, "\n")] = 0;
		if (strlen(p) >= cap) {
			ret = -ENAMETOOLONG;
			break;
		}
		strcpy(path, p);
		ret = 0;
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static int has_option(const char *opts, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = opts; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, want, n) && (p[n] == ',' || p[n] == 0 || p[n] == '\n'))
			return 1;
	}
	return 0;
}

/* A mount of hierarchy `hier` whose root contains cgpath: the directory for cgpath. */
static int cgroup_dir(int hier, const char *cgpath, char *dir, size_t cap)
{
	char *line = NULL, *f[10], *sep, *save;
	size_t len = 0, rl;
	int ret = -ENOENT, n;
	FILE *m = fopen("/proc/self/mountinfo", "re");

	if (!m)
		return -errno;
	while (ret && getline(&line, &len, m) > 0) {
		/* id parent dev root mountpoint options [optional...] - fstype source super */
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = 0;
		n = 0;
		for (char *tok = strtok_r(line, " ", &save); tok && n < 5;
		     tok = strtok_r(NULL, " ", &save))
			f[n++] = tok;
		if (n < 5)
			continue;
		f[5] = strtok_r(sep + 3, " ", &save); /* fstype */
		f[6] = strtok_r(NULL, " ", &save);    /* source */
		f[7] = strtok_r(NULL, " \n", &save);  /* super options */
		if (!f[5] || !f[7])
			continue;
		if (hier == 0 ? strcmp(f[5], "cgroup2")
			      : strcmp(f[5], "cgroup") || !has_option(f[7], "perf_event"))
			continue;
		unescape(f[3]);
		unescape(f[4]);
		rl = strcmp(f[3], "/") ? strlen(f[3]) : 0;
		if (strncmp(cgpath, f[3], rl) || (cgpath[rl] != '/' && cgpath[rl] != 0))
			continue;
		if ((size_t)snprintf(dir, cap, "%s%s", f[4], cgpath + rl) >= cap)
			ret = -ENAMETOOLONG;
		else
			ret = 0;
	}
	free(line);
	fclose(m);
	return ret;
}

/* cgroupfs encodes a directory's handle as its 64-bit kernfs id; the inode number is
 * the same id where ino_t has 64 bits, and serves where handles are refused. */
static int dir_id(const char *dir, uint64_t *id)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[sizeof(uint64_t)];
	} h;
	struct stat st;
	int mount_id;

	h.fh.handle_bytes = sizeof(uint64_t);
	if (!name_to_handle_at(AT_FDCWD, dir, &h.fh, &mount_id, 0) &&
	    h.fh.handle_bytes == sizeof(uint64_t)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	if (stat(dir, &st))
		return -errno;
	*id = (uint64_t)st.st_ino;
	return 0;
}

static int path_id(int hier, const char *path, uint64_t *id)
{
	char dir[4096 + 256];
	int ret = cgroup_dir(hier, path, dir, sizeof(dir));

	if (!ret)
		return dir_id(dir, id);
	/* Unmounted, the root can still be named; inside a cgroup namespace "/" is the
	 * namespace's root, whose id only a mount tells. */
	if (ret == -ENOENT && !strcmp(path, "/")) {
		*id = CGROUP_ROOT_ID;
		return 0;
	}
	return ret;
}

/* Called per sample: the controller's hierarchy is looked up once, and the id of the
 * last path found is kept, so a task that stays in its cgroup costs one small /proc
 * read instead of a walk of the mount table. */
int ref_host_cgroup_id(struct ref_host_cache *c, pid_t task, uint64_t *id)
{
	char path[4096];
	int ret;

	if (c->cgroup_hier == -EAGAIN)
		c->cgroup_hier = perf_event_hierarchy();
	if (c->cgroup_hier < 0)
		return c->cgroup_hier;
	ret = task_cgroup_path(task, c->cgroup_hier, path, sizeof(path));
	if (ret)
		return ret;
	if (c->cgroup_path[0] && !strcmp(path, c->cgroup_path)) {
		*id = c->cgroup_id;
		return 0;
	}
	ret = path_id(c->cgroup_hier, path, id);
	if (!ret) {
		strcpy(c->cgroup_path, path);
		c->cgroup_id = *id;
	}
	return ret;
}
