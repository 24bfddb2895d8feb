/* The ioctls a software clock event refuses, and requests that are not perf's.
 * Errnos are Linux's (_perf_ioctl() and its helpers in kernel/events/core.c, measured
 * here as root and as uid 65534). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "pecs/vectors.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"
#include "pecs/toolkit/version.h"

static int open_clock(struct pecs_t *t, uint64_t config)
{
	struct pecs_attr a;

	pecs_attr_counting(t, &a, config);
	return pecs_open(t, &a, 0, -1, -1, 0);
}

PECS_CASE("Required.Ioctl.SetFilter.NonTracepointEinval", "counting", "IOC-SET-FILTER-EINVAL")
{
	static const char filter[] = "common_pid == 1";
	int fd = open_clock(t, PECS_SW_TASK_CLOCK);

	PECS_CHECK_OK(t, fd);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_SET_FILTER, (unsigned long)filter), EINVAL);
}

/* The string is copied in before the event kind is looked at. */
PECS_CASE("Required.Ioctl.SetFilter.NullPointerEfault", "counting", "IOC-SET-FILTER-EFAULT")
{
	int fd = open_clock(t, PECS_SW_TASK_CLOCK);

	PECS_CHECK_OK(t, fd);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_SET_FILTER, 0), EFAULT);
}

PECS_CASE("Required.Ioctl.SetBpf.BadFdEbadf", "counting", "IOC-SET-BPF-EBADF")
{
	int fd = open_clock(t, PECS_SW_TASK_CLOCK);

	PECS_CHECK_OK(t, fd);
	/* The argument is a u32 fd: -1 after truncation. */
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_SET_BPF, 0xfffffffful), EBADF);
}

PECS_CASE("Required.Ioctl.SetBpf.NonBpfFdEinval", "counting", "IOC-SET-BPF-EINVAL")
{
	int fd = open_clock(t, PECS_SW_TASK_CLOCK), other, r;

	PECS_CHECK_OK(t, fd);
	/* The argument is a process fd (an in-process engine's event fds are not), so the
	 * non-BPF fd is a real one: /dev/null. */
	other = PECS_SAFE_SYS(t, open("/dev/null", O_RDONLY | O_CLOEXEC));
	r = pecs_ioctl(t, fd, PECS_IOC_SET_BPF, (unsigned long)other);
	close(other);
	PECS_CHECK_ERR(t, r, EINVAL);
}

PECS_CASE("Required.Ioctl.QueryBpf.ClockEventRefused", "counting",
	  "IOC-QUERY-BPF-EPERM,IOC-QUERY-BPF-EINVAL")
{
	struct {
		uint32_t ids_len, prog_cnt, ids[4];
	} q = {4, 0, {0}};
	int fd = open_clock(t, PECS_SW_TASK_CLOCK);

	PECS_CHECK_OK(t, fd);
	/* The capability check comes first; with it, a clock event is the wrong kind. */
	if (pecs_host(t)->privileged)
		PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_QUERY_BPF, (unsigned long)&q), EINVAL);
	else
		PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_QUERY_BPF, (unsigned long)&q), EPERM);
}

/* MODIFY_ATTRIBUTES with a copy of the event's own attr. Clock events were moved onto
 * their own PMU type at open, so the copy's PERF_TYPE_SOFTWARE no longer matches: EINVAL.
 * Before Linux 6.12 they kept PERF_TYPE_SOFTWARE (6.1.192's perf_swevent_init), the
 * types match, and software events cannot be modified: EOPNOTSUPP. */
PECS_CASE("Required.Ioctl.ModifyAttributes.ClockEventsEinval", "counting",
	  "IOC-MODIFY-EINVAL-CLOCK")
{
	static const uint64_t clocks[] = {PECS_SW_CPU_CLOCK, PECS_SW_TASK_CLOCK};
	struct pecs_attr a;

	for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		int fd = open_clock(t, clocks[i]);

		PECS_CHECK_OK(t, fd);
		pecs_attr_counting(t, &a, clocks[i]);
		PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)&a),
			       pecs_linux_before(t, 6, 12) ? EOPNOTSUPP : EINVAL);
	}
}

/* Other software events keep PERF_TYPE_SOFTWARE; only breakpoints can be modified. */
PECS_CASE("Recommended.Ioctl.ModifyAttributes.OtherSoftwareEopnotsupp",
	  "counting", "IOC-MODIFY-EOPNOTSUPP")
{
	static const uint64_t others[] = {PECS_SW_PAGE_FAULTS, PECS_SW_DUMMY};
	struct pecs_attr a;

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		int fd = open_clock(t, others[i]);

		PECS_CHECK_OK(t, fd);
		pecs_attr_counting(t, &a, others[i]);
		PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)&a),
			       EOPNOTSUPP);
	}
}

PECS_CASE("Required.Ioctl.Unknown.Enotty", "counting", "IOC-UNKNOWN-ENOTTY")
{
	/* The next free number in '$', one far past it, another type, and nothing. */
	static const unsigned long requests[] = {0x240c, 0x24ff, 0x2500, 0x0};
	int fd = open_clock(t, PECS_SW_TASK_CLOCK);

	PECS_CHECK_OK(t, fd);
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		int r = pecs_ioctl(t, fd, requests[i], 0);

		PECS_CHECK_ERR(t, r, ENOTTY, "request 0x%lx",
			       requests[i]);
	}
}

/* The kernel switches on the whole request word, so the same type and number with another
 * direction or size is a different, unknown request. Arg 0 keeps a wrong match harmless:
 * the pointer requests then fail with EFAULT, the value ones act on nothing else. */
PECS_CASE("Required.Ioctl.Encoding.OtherDirectionOrSizeEnotty", "counting", "IOC-ENCODING-EXACT")
{
	int fd = open_clock(t, PECS_SW_TASK_CLOCK);

	PECS_CHECK_OK(t, fd);
	PECS_CHECK(t, pecs_vec_ioctls_count > 0, "no ioctl vectors");
	for (size_t i = 0; i < pecs_vec_ioctls_count; i++) {
		const struct pecs_vec_ioctl *v = &pecs_vec_ioctls[i];
		unsigned long dir = (v->request >> 30) & 3, size = (v->request >> 16) & 0x3fff;
		unsigned long base = v->request & 0xffff, variants[5];
		size_t n = 0;

		for (unsigned long d = 0; d < 4; d++)
			if (d != dir)
				variants[n++] = base | (d << 30) | (size << 16);
		variants[n++] = base | (dir << 30) | ((size ^ 8) << 16);
		variants[n++] = base | (dir << 30) | ((size | 0x100) << 16);
		for (size_t k = 0; k < n; k++) {
			int r = pecs_ioctl(t, fd, variants[k], 0);

			PECS_CHECK_ERR(t, r, ENOTTY,
				       "tcId %d (%s 0x%lx) as 0x%lx",
				       v->tc_id, v->name, v->request, variants[k]);
		}
	}
}
