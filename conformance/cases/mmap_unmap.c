/* munmap(2) of part of a ring from its first page: perf_mmap_may_split() refuses any
 * split of a perf mapping, wherever the cut is. Found by the mutation tool
 * (tools/mutate): the refusal of a short length at the mapping's own start had no case,
 * only a cut further in (Mmap.Munmap.PartialEinval). */
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
