/* munmap(2) of part of a ring from its first page: perf_mmap_may_split() refuses any
 * split of a perf mapping, wherever the cut is. Found by the mutation tool
 * (tools/mutate): the refusal of a short length at the mapping's own start had no case,
 * only a cut further in (Mmap.Munmap.PartialEinval). */
#include <poll.h>
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"

PECS_CASE("Required.Mmap.Munmap.HeadOnlyEinval", "mmap", "MMAP-PARTIAL-UNMAP-EINVAL")
{
	struct pecs_attr a;
	struct pecs_ring r;
	size_t page = (size_t)pecs_host(t)->page_size;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 2, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_ERR(t, pecs_munmap(t, r.meta, page), EINVAL, "the metadata page alone");
	PECS_CHECK_ERR(t, pecs_munmap(t, r.meta, 2 * page), EINVAL, "the first two pages");
	/* Still mapped and intact, and it goes whole. */
	PECS_CHECK_EQ(t, r.meta->data_size, r.data_size);
	PECS_CHECK_EQ(t, pecs_munmap(t, r.meta, r.map_len), 0);
}

/* An event redirected into another's ring (SET_OUTPUT) and closed leaves the ring's
 * own event attached; the ring's last munmap then detaches it too, so it polls POLLHUP
 * like any event without a ring. (A mutant of ref that dropped the wrong event from the
 * ring's list at the close survived every other case.) */
PECS_CASE("Required.Mmap.Munmap.OwnerDetachedAfterRedirectedClosed",
	  "mmap,poll,ioctl.set_output", "MMAP-LAST-UNMAP-DETACHES")
{
	struct pecs_attr a;
	struct pecs_ring r;
	int owner, other, rev;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	owner = PECS_OPEN(t, &a, 0, -1, -1, 0);
	other = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, owner, 2, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, other, PECS_IOC_SET_OUTPUT, (unsigned long)owner));
	PECS_CHECK_OK(t, pecs_close(t, other));
	rev = pecs_poll(t, owner, POLLIN, 0);
	PECS_CHECK(t, rev == 0, "while mapped: revents %s, expected 0", pecs_retname(rev));
	PECS_CHECK_EQ(t, pecs_munmap(t, r.meta, r.map_len), 0);
	rev = pecs_poll(t, owner, POLLIN, 0);
	PECS_CHECK(t, rev >= 0 && (rev & POLLHUP), "after the last munmap: revents %s, "
		   "expected POLLHUP", pecs_retname(rev));
}
