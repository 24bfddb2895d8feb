/* mmap() refusals that depend on how the event was opened or redirected, the locked-
 * memory limit, and what the last munmap of a shared ring does. Sources: perf_mmap and
 * perf_mmap_close in kernel/events/core.c; measured on Linux 6.18, where mapping an
 * event that writes into another's ring is EBUSY (6.12's source still shared the ring). */
#include <poll.h>
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/version.h"

/* A slow sampler: these cases map and redirect, they never wait for samples. */
#define SAMPLER(t, ...) \
	PECS_SAMPLER(t, .period_ns = 1000000, .sample_type = PECS_SAMPLE_IP, __VA_ARGS__)

static size_t pages(struct pecs_t *t, size_t n)
{
	return n * (size_t)pecs_host(t)->page_size;
}

/* An inherited event on any cpu would have its children on every CPU write into one
 * ring; the kernel refuses the mapping. On one cpu it maps. */
PECS_CASE("Required.Mmap.Inherit.AnyCpuEinval", "mmap", "MMAP-INHERIT-CPU-ANY-EINVAL")
{
	int any = SAMPLER(t, .attr_flags = PECS_ATTR_INHERIT);
	int one = SAMPLER(t, .attr_flags = PECS_ATTR_INHERIT,
			  .flags = PECS_SAMPLER_ON_CPU, .cpu = 0);
	void *m;

	PECS_CHECK_ERR(t, pecs_mmap(t, any, pages(t, 2), PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m),
		       EINVAL);
	PECS_CHECK_ERR(t, pecs_mmap(t, any, pages(t, 1), PROT_READ, MAP_SHARED, 0, &m), EINVAL);
	PECS_CHECK_EQ(t, pecs_mmap(t, one, pages(t, 2), PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m),
		      0);
}

/* Once an event writes into another's ring it cannot have one of its own: the same
 * size is EBUSY, another size EINVAL. */
PECS_CASE("Required.Mmap.Redirected.MappingItIsEbusy",
	  "mmap,ioctl.set_output", "MMAP-REDIRECTED-EBUSY")
{
	struct pecs_ring r;
	int target = SAMPLER(t), source = SAMPLER(t);
	void *m;

	PECS_CHECK_OK(t, pecs_ring_map(t, target, 1, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_EQ(t, pecs_ioctl(t, source, PECS_IOC_SET_OUTPUT, (unsigned long)target), 0);
	/* Up to Linux 6.12 the same size maps the target's buffer (6.12.118's perf_mmap
	 * takes event->rb as it is); measured EBUSY on 6.18, the release between is not
	 * pinned: 6.13 is assumed. */
	if (pecs_linux_before(t, 6, 13)) {
		/* kept mapped: its munmap would detach the source from the target's ring */
		PECS_CHECK_OK(t, pecs_mmap(t, source, pages(t, 2), PROT_READ | PROT_WRITE,
					   MAP_SHARED, 0, &m));
	} else {
		PECS_CHECK_ERR(t, pecs_mmap(t, source, pages(t, 2), PROT_READ | PROT_WRITE,
					    MAP_SHARED, 0, &m), EBUSY);
	}
	PECS_CHECK_ERR(t, pecs_mmap(t, source, pages(t, 3), PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				    &m), EINVAL);
}

/* When the target's last mapping goes, the ring goes, and every event writing into it
 * is detached: no buffer (poll says POLLHUP), and free to map a ring of its own. */
PECS_CASE("Required.Mmap.Munmap.LastUnmapDetachesRedirected",
	  "mmap,ioctl.set_output,poll", "MMAP-LAST-UNMAP-DETACHES")
{
	int target = SAMPLER(t), source = SAMPLER(t), rev;
	void *m, *own;

	PECS_CHECK_EQ(t, pecs_mmap(t, target, pages(t, 2), PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				   &m), 0);
	PECS_CHECK_EQ(t, pecs_ioctl(t, source, PECS_IOC_SET_OUTPUT, (unsigned long)target), 0);
	rev = pecs_poll(t, source, POLLIN, 0);
	PECS_CHECK(t, rev == 0, "redirected into a mapped ring: revents %s, expected 0",
		   pecs_retname(rev));
	PECS_CHECK_EQ(t, pecs_munmap(t, m, pages(t, 2)), 0);
	rev = pecs_poll(t, source, POLLIN, 0);
	PECS_CHECK(t, rev >= 0 && (rev & POLLHUP), "after the last munmap: revents %s, expected "
		   "POLLHUP", pecs_retname(rev));
	/* another size than the old ring's: only a detached event may take it */
	PECS_CHECK_EQ(t, pecs_mmap(t, source, pages(t, 3), PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				   &own), 0);
}

/* Without CAP_IPC_LOCK a ring is charged to perf_event_mlock_kb per CPU, then to
 * RLIMIT_MEMLOCK; beyond both, mmap is EPERM. The refusal comes before any allocation. */
PECS_CASE("Required.Mmap.Mlock.BeyondLimitsEperm", "mmap,policy", "MMAP-MLOCK-EPERM")
{
	const struct pecs_host_facts *h = pecs_host(t);
	uint64_t allowed, data_pages;
	struct pecs_ring r;
	void *m;
	int fd, big;

	if (h->privileged)
		PECS_ENV_SKIP(t, "needs an unprivileged caller without CAP_IPC_LOCK (uid 65534)");
	if (h->paranoid < 0)
		PECS_ENV_SKIP(t, "perf_event_paranoid -1 lifts the locked-memory limit");
	data_pages = pecs_ring_pages_past_mlock(t, 1ull << 20, &allowed);
	fd = SAMPLER(t);
	/* a small ring is within the limits */
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 1, PROT_READ | PROT_WRITE, &r));
	big = SAMPLER(t);
	int ret = pecs_mmap(t, big, (size_t)(data_pages + 1) * (size_t)h->page_size,
			    PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m);
	PECS_CHECK_ERR(t, ret, EPERM, "a ring of %llu data pages (limits: %llu pages)",
		       (unsigned long long)data_pages, (unsigned long long)allowed);
}
