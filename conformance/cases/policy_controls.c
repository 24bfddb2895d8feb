/* Positive controls of the permission rules: what a caller may do that a refusal case
 * beside it might wrongly extend to (a privilege asked for too widely, or held but not
 * honoured). */
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pecs/case.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/version.h"

/* text_poke records kernel text changes, yet perf_event_open asks for kernel access
 * only by exclude_kernel (and a few sample types): an exclude_kernel event with
 * text_poke opens for anyone paranoid 2 lets open at all. Before Linux 6.13 the answer
 * depends on the point release, which the release string does not carry: Debian's
 * 6.1.176 opens it, its 6.1.192 and 6.12.118 refuse it without privilege (their
 * perf_event_open asks perf_allow_kernel() for `!exclude_kernel || text_poke`). There the
 * case takes either answer and ends ENV_SKIP naming it. */
PECS_CASE("Required.Open.Policy.TextPokeExcludeKernelOpens", "", "OPEN-TEXT-POKE-NO-PRIV")
{
	struct pecs_attr attr;
	int ret;

	pecs_attr_counting(t, &attr, PECS_SW_DUMMY);
	attr.flags |= PECS_ATTR_TEXT_POKE;
	ret = pecs_open(t, &attr, 0, -1, -1, 0);
	if (!pecs_host(t)->privileged && pecs_host(t)->paranoid > 1 &&
	    pecs_linux_before(t, 6, 13)) {
		PECS_CHECK(t, ret >= 0 || ret == -EACCES, "text_poke with exclude_kernel: %s, "
			   "expected an fd or EACCES", pecs_retname(ret));
		PECS_ENV_SKIP(t, "before Linux 6.13 text_poke without privilege opens in some "
			      "point releases and is EACCES in others (here: %s)",
			      ret >= 0 ? "opens" : "EACCES");
	}
	PECS_CHECK_OK(t, ret, "text_poke with exclude_kernel");
}

/* 1 when this process holds CAP_IPC_LOCK in its effective set. */
static int have_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};

	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return (data[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1;
}

/* The control of Mmap.Mlock.BeyondLimitsEperm: with CAP_IPC_LOCK the ring that the
 * limits refuse to others maps. */
PECS_CASE("Required.Mmap.Mlock.IpcLockMapsBeyondLimits", "mmap,policy", "MMAP-MLOCK-IPC-LOCK")
{
	const struct pecs_host_facts *h = pecs_host(t);
	uint64_t allowed, data_pages;
	struct pecs_attr attr;
	void *m;
	int fd;

	/* The implementation's policy is this process's credentials (the kernel, ref). */
	if (!h->privileged || !have_ipc_lock())
		PECS_ENV_SKIP(t, "needs a privileged caller with CAP_IPC_LOCK (root)");
	data_pages = pecs_ring_pages_past_mlock(t, 1ull << 16, &allowed);
	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_mmap(t, fd, (size_t)(data_pages + 1) * (size_t)h->page_size,
				   PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m),
		      "a ring of %llu data pages (limits: %llu pages)",
		      (unsigned long long)data_pages, (unsigned long long)allowed);
}
