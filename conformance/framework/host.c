/* What the suite knows of the host before the implementation says otherwise. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/capability.h>

#include "runner.h"

static int read_proc_int(const char *path, int fallback)
{
	FILE *f = fopen(path, "r");
	int v;
	if (!f)
		return fallback;
	if (fscanf(f, "%d", &v) != 1)
		v = fallback;
	fclose(f);
	return v;
}

/* Capabilities held inside a user namespace (Bazel's sandbox, rootless containers) do not
 * count for perf_event_open: the kernel checks them against the initial namespace. */
static int in_initial_user_namespace(void)
{
	FILE *f = fopen("/proc/self/uid_map", "r");
	unsigned long inside, outside, count;
	int initial = 1;
	if (!f)
		return 1;
	if (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		initial = inside == 0 && outside == 0 && count == 4294967295ul;
	fclose(f);
	return initial;
}

static int has_perf_privilege(void)
{
	if (!in_initial_user_namespace())
		return 0;
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

void pecs_host_defaults(struct pecs_host_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->size = sizeof(*f);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	f->ncpus = n > 0 ? (int)n : 1;
	f->page_size = sysconf(_SC_PAGESIZE);
	f->max_stack = read_proc_int("/proc/sys/kernel/perf_event_max_stack", 127);
	f->max_sample_rate = read_proc_int("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
	f->mlock_kb = read_proc_int("/proc/sys/kernel/perf_event_mlock_kb", 516);
	f->paranoid = read_proc_int("/proc/sys/kernel/perf_event_paranoid", 2);
	f->privileged = has_perf_privilege();
	f->attr_size = PECS_ATTR_SIZE_LATEST;
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(f->kernel_release, sizeof(f->kernel_release), "%.63s", u.release);
}
