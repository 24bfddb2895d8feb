/* Host facts for the task-dependent sample words. Written apart from any engine: the
 * cgroup is named by its directory's inode (an engine may use file handles), and the
 * page size from smaps and pagemap. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pecs/toolkit/host.h"

static int perf_event_hierarchy(void)
{
	char name[64];
	int h, enabled, n, found = -ENOENT;
	FILE *f = fopen("/proc/cgroups", "r");

	if (!f)
		return -errno;
	/* Skip the header line. */
	if (!fgets(name, sizeof(name), f)) {
		fclose(f);
		return -ENOENT;
	}
	while (!strchr(name, '\n') && fgets(name, sizeof(name), f))
		;
	while (fscanf(f, "%63s %d %d %d\n", name, &h, &n, &enabled) == 4)
		if (!strcmp(name, "perf_event"))
			found = h;
	fclose(f);
	return found;
}

int pecs_host_cgroup_id(uint64_t *id)
{
	char line[4096], path[4096] = "", root[4096], mnt[4096], type[64], opts[1024];
	char dir[8192];
	int hier = perf_event_hierarchy(), h, found = 0;
	struct stat st;
	FILE *f;

	if (hier < 0)
		return hier;
	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2 || sscanf(line, "%d:", &h) != 1 || h != hier)
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(c2 + 1, "\n"), c2 + 1);
	}
	fclose(f);
	if (!path[0])
		return -ENOENT;
	f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");
		size_t rl;

		if (!dash || sscanf(line, "%*d %*d %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(dash, " - %63s %*s %1023s", type, opts) != 2)
			continue;
		if (hier ? strcmp(type, "cgroup") || !strstr(opts, "perf_event")
			 : strcmp(type, "cgroup2"))
			continue;
		rl = strcmp(root, "/") ? strlen(root) : 0;
		if (strncmp(path, root, rl))
			continue;
		snprintf(dir, sizeof(dir), "%s%s", mnt, path + rl);
		found = 1;
	}
	fclose(f);
	if (!found) {
		if (strcmp(path, "/"))
			return -ENOENT;
		*id = 1;
		return 0;
	}
	if (stat(dir, &st))
		return -errno;
	*id = (uint64_t)st.st_ino;
	return 0;
}

static int present(uint64_t addr)
{
	uint64_t e;
	long ps = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 1;
	n = pread(fd, &e, sizeof(e), (off_t)(addr / (uint64_t)ps * 8));
	close(fd);
	return n != 8 || (e >> 63);
}

void pecs_host_page_size(uint64_t addr, uint64_t *size, uint64_t *alt)
{
	char line[1024];
	uint64_t lo, hi, kb, kps = 0, pmd = 0;
	int in = 0, found = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	*size = *alt = 0;
	if (!f || !addr)
		goto out;
	while (fgets(line, sizeof(line), f)) {
		char key[64];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*4[rwxsp-] ", &lo, &hi) == 2) {
			if (in)
				break;
			in = found = addr >= lo && addr < hi;
		} else if (in && sscanf(line, "%63[^:]: %" SCNu64, key, &kb) == 2) {
			if (!strcmp(key, "KernelPageSize"))
				kps = kb * 1024;
			else if (strstr(key, "PmdMapped") || !strcmp(key, "AnonHugePages"))
				pmd += kb;
		}
	}
	if (!found || !present(addr))
		goto out;
	*size = *alt = kps;
	if (pmd) {
		FILE *p = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
		unsigned long long v;

		if (p && fscanf(p, "%llu", &v) == 1)
			*alt = v;
		if (p)
			fclose(p);
	}
out:
	if (f)
		fclose(f);
}

int pecs_host_uncharged_ns(uint64_t *ns, uint64_t *granule_ns)
{
	/* user nice system idle iowait irq softirq steal */
	unsigned long long v[8];
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8 || hz <= 0)
		return -EIO;
	*granule_ns = 1000000000ull / (uint64_t)hz;
	*ns = (uint64_t)(v[5] + v[6] + v[7]) * *granule_ns;
	return 0;
}
