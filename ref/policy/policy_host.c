#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/ref.h"

static int read_paranoid(int *out)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v, ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", &v) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*out = v;
	return 0;
}

int ref_policy_from_host(struct ref_policy *p)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	int err;

	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	/* Without the sysctl (perf disabled in the kernel) the strictest level is honest. */
	if (read_paranoid(&p->paranoid))
		p->paranoid = 3;
	memset(data, 0, sizeof(data));
	/* glibc has no capget wrapper without libcap. */
	err = (int)syscall(SYS_capget, &hdr, data);
	if (err)
		return -errno;
	p->caps = (uint64_t)data[0].effective | (uint64_t)data[1].effective << 32;
	p->uid = getuid();
	return 0;
}
