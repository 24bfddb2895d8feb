/* What the suite knows of the host before the implementation says otherwise. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/capability.h>

#include "runner.h"

const char *const pecs_fact_names[PECS_FACT_COUNT] = {
	"ncpus", "page_size", "max_stack", "max_sample_rate", "mlock_kb", "paranoid",
	"privileged", "attr_size", "kernel_release",
};

/* Where a fact came from; "assumed ..." when the suite had to guess. */
static void source(struct pecs_fact_sources *src, enum pecs_fact fact, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void source(struct pecs_fact_sources *src, enum pecs_fact fact, const char *fmt, ...)
{
	if (!src)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(src->of[fact], sizeof(src->of[fact]), fmt, ap);
	va_end(ap);
}

static int read_proc_int(const char *path, int fallback, struct pecs_fact_sources *src,
			 enum pecs_fact fact)
{
	FILE *f = fopen(path, "r");
	int v;
	if (!f) {
		source(src, fact, "assumed %d: %s unreadable", fallback, path);
		return fallback;
	}
	if (fscanf(f, "%d", &v) != 1) {
		v = fallback;
		source(src, fact, "assumed %d: %s unparsable", fallback, path);
	} else {
		source(src, fact, "%s", path);
	}
	fclose(f);
	return v;
}

/* Capabilities held inside a user namespace (Bazel's sandbox, rootless containers) do not
 * count for perf_event_open: the kernel checks them against the initial namespace. */
static int in_initial_user_namespace(int *known)
{
	FILE *f = fopen("/proc/self/uid_map", "r");
	unsigned long inside, outside, count;
	int initial = 1;
	*known = f != NULL;
	if (!f)
		return 1;
	if (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		initial = inside == 0 && outside == 0 && count == 4294967295ul;
	fclose(f);
	return initial;
}

static int has_perf_privilege(struct pecs_fact_sources *src)
{
	int known;
	if (!in_initial_user_namespace(&known)) {
		source(src, PECS_FACT_PRIVILEGED, "capabilities, in a user namespace (uid_map)");
		return 0;
	}
	if (!known)
		source(src, PECS_FACT_PRIVILEGED, "assumed: /proc/self/uid_map unreadable, so a "
		       "user namespace (where capabilities do not count) cannot be ruled out; "
		       "capabilities decided");
	else
		source(src, PECS_FACT_PRIVILEGED, "capabilities (capget)");
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return geteuid() == 0;
	const int cap_sys_admin = 21, cap_perfmon = 38;
	int admin = (data[cap_sys_admin / 32].effective >> (cap_sys_admin % 32)) & 1;
	int perfmon = (data[cap_perfmon / 32].effective >> (cap_perfmon % 32)) & 1;
	return admin || perfmon;
}

/* X.Y.Z at p: its length, 0 when p does not start with three dot-separated numbers. */
static size_t point_release_at(const char *p)
{
	const char *q = p;
	for (int part = 0; part < 3; part++) {
		if (part && *q++ != '.')
			return 0;
		if (!isdigit((unsigned char)*q))
			return 0;
		while (isdigit((unsigned char)*q))
			q++;
	}
	return (size_t)(q - p);
}

int pecs_release_point(const char *release, const char *version, char *out, size_t len)
{
	/* Debian's release names its ABI (6.1.0-50-cloud-amd64), not the stable release it
	 * builds; that is in the version, "#1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (...)". */
	const char *d = strstr(version, " Debian ");
	if (!d)
		return 0;
	d += strlen(" Debian ");
	size_t n = point_release_at(d);
	/* Only the release's own X.Y: anything else is not the same kernel's point. */
	const char *dot = n ? strchr(d, '.') : NULL;
	const char *second = dot ? strchr(dot + 1, '.') : NULL;
	size_t xy = second ? (size_t)(second - d) : 0;
	if (!xy || strncmp(release, d, xy) != 0 || release[xy] != '.' ||
	    !isdigit((unsigned char)release[xy + 1]))
		return 0;
	snprintf(out, len, "%.*s", (int)n, d);
	return 1;
}

void pecs_host_defaults_sourced(struct pecs_host_facts *f, struct pecs_fact_sources *src)
{
	memset(f, 0, sizeof(*f));
	if (src)
		memset(src, 0, sizeof(*src));
	f->size = sizeof(*f);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	f->ncpus = n > 0 ? (int)n : 1;
	source(src, PECS_FACT_NCPUS, n > 0 ? "sysconf" : "assumed 1: sysconf failed");
	f->page_size = sysconf(_SC_PAGESIZE);
	source(src, PECS_FACT_PAGE_SIZE, "sysconf");
	f->max_stack = read_proc_int("/proc/sys/kernel/perf_event_max_stack", 127, src,
				     PECS_FACT_MAX_STACK);
	f->max_sample_rate = read_proc_int("/proc/sys/kernel/perf_event_max_sample_rate", 100000,
					   src, PECS_FACT_MAX_SAMPLE_RATE);
	f->mlock_kb = read_proc_int("/proc/sys/kernel/perf_event_mlock_kb", 516, src,
				    PECS_FACT_MLOCK_KB);
	f->paranoid = read_proc_int("/proc/sys/kernel/perf_event_paranoid", 2, src,
				    PECS_FACT_PARANOID);
	f->privileged = has_perf_privilege(src);
	f->attr_size = PECS_ATTR_SIZE_LATEST;
	source(src, PECS_FACT_ATTR_SIZE, "assumed %u: the suite's latest attr size",
	       PECS_ATTR_SIZE_LATEST);
	struct utsname u;
	if (uname(&u) != 0) {
		snprintf(f->kernel_release, sizeof(f->kernel_release), "unknown");
		source(src, PECS_FACT_KERNEL_RELEASE, "unknown: uname failed");
	} else if (pecs_release_point(u.release, u.version, f->kernel_release,
				      sizeof(f->kernel_release))) {
		source(src, PECS_FACT_KERNEL_RELEASE, "uname -v's point release (-r %.48s)",
		       u.release);
	} else {
		snprintf(f->kernel_release, sizeof(f->kernel_release), "%.63s", u.release);
		source(src, PECS_FACT_KERNEL_RELEASE, "uname");
	}
}

void pecs_host_defaults(struct pecs_host_facts *f)
{
	pecs_host_defaults_sourced(f, NULL);
}
