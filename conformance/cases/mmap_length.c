/* mmap() of an event fd: the lengths, flags and offsets perf_mmap() accepts, and one
 * buffer per event however often it is mapped (kernel/events/core.c perf_mmap(),
 * measured here). Lengths are counted in the host's pages, never in 4 KiB. */
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/version.h"

static size_t pages(struct pecs_t *t, unsigned int n)
{
	return (size_t)n * (size_t)pecs_host(t)->page_size;
}

PECS_CASE("Required.Mmap.Length.OnePlusPowerOfTwoPagesOk", "mmap", "MMAP-LEN-1-PLUS-2N")
{
	static const unsigned int ok[] = {1, 2, 3, 5, 9};
	void *addr;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP), r;

		r = pecs_mmap(t, fd, pages(t, ok[i]), PROT_READ | PROT_WRITE, MAP_SHARED, 0, &addr);
		PECS_CHECK_OK(t, r, "%u pages", ok[i]);
	}
}

PECS_CASE("Required.Mmap.Length.OtherPageCountsEinval", "mmap", "MMAP-LEN-EINVAL")
{
	static const unsigned int bad[] = {4, 6, 7, 8, 10};
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);
	void *addr;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = pecs_mmap(t, fd, pages(t, bad[i]), PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				  &addr);

		PECS_CHECK_ERR(t, r, EINVAL, "%u pages", bad[i]);
	}
	/* The refusals left nothing behind: a good length still maps. */
	PECS_CHECK_OK(t, pecs_mmap(t, fd, pages(t, 3), PROT_READ, MAP_SHARED, 0, &addr));
}

PECS_CASE("Required.Mmap.Flags.PrivateEinval", "mmap", "MMAP-PRIVATE-EINVAL")
{
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);
	void *addr;

	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_PRIVATE, 0, &addr), EINVAL);
}

PECS_CASE("Required.Mmap.Flags.NonZeroOffsetEinval", "mmap", "MMAP-OFFSET-EINVAL")
{
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);
	void *addr;

	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED,
				    (off_t)pages(t, 1), &addr),
		       EINVAL);
}

PECS_CASE("Required.Mmap.Prot.ExecEperm", "mmap", "MMAP-EXEC-EPERM")
{
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);
	void *addr;

	/* The event file's mount is noexec since Linux 6.15 (fs/anon_inodes.c sets
	 * SB_I_NOEXEC; 6.12.118's does not): before it PROT_EXEC maps like PROT_READ. */
	if (pecs_linux_before(t, 6, 15)) {
		PECS_CHECK_OK(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ | PROT_EXEC, MAP_SHARED, 0,
					   &addr));
		PECS_CHECK_OK(t, pecs_munmap(t, addr, pages(t, 2)));
		return;
	}
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ | PROT_EXEC, MAP_SHARED, 0,
				    &addr),
		       EPERM);
}

PECS_CASE("Required.Mmap.Shared.SameSizeSharesBuffer", "mmap", "MMAP-SAME-FD-SHARES")
{
	struct pecs_ring r1, r2;
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 2, PROT_READ | PROT_WRITE, &r1));
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 2, PROT_READ | PROT_WRITE, &r2));
	PECS_CHECK(t, r1.meta != r2.meta, "two mappings at one address");
	/* Only the metadata page is writable (a store into the data pages faults with
	 * SIGBUS on Linux), so sharing is shown with data_tail: stored through one mapping,
	 * read through the other. */
	__atomic_store_n(&r2.meta->data_tail, 64, __ATOMIC_RELEASE);
	PECS_CHECK_EQ(t, pecs_ring_tail_published(&r1), 64);
	__atomic_store_n(&r1.meta->data_tail, 0, __ATOMIC_RELEASE);
	PECS_CHECK_EQ(t, pecs_ring_tail_published(&r2), 0);
}

PECS_CASE("Required.Mmap.Shared.OtherSizeEinval", "mmap", "MMAP-SAME-FD-OTHER-SIZE")
{
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);
	void *addr;

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 2, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				    &addr),
		       EINVAL);
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 5), PROT_READ | PROT_WRITE, MAP_SHARED, 0,
				    &addr),
		       EINVAL);
}

/* The ring is mapped whole or not at all (also kernel selftest perf_events/mmap.c). */
PECS_CASE("Required.Mmap.Munmap.PartialEinval", "mmap", "MMAP-PARTIAL-UNMAP-EINVAL")
{
	struct pecs_ring r;
	int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_IP);

	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 2, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_ERR(t, pecs_munmap(t, (uint8_t *)r.meta + pages(t, 2), pages(t, 1)), EINVAL);
	/* Still mapped and intact. */
	PECS_CHECK_EQ(t, r.meta->data_size, r.data_size);
	PECS_CHECK_EQ(t, pecs_munmap(t, r.meta, r.map_len), 0);
}
