/* The ring's mapping is the kernel's: what a program's own mremap(2), mmap(2) with
 * MAP_FIXED and fork(2) do to it. perf_mmap() marks the vma VM_DONTCOPY | VM_DONTEXPAND
 * and its vm_ops refuse a split (perf_mmap_may_split); the answers below were measured on
 * 6.18 as root and as uid 65534. The cases call the C library on the address the
 * implementation returned, as a program does, so an implementation in the caller's
 * process answers only what the process's own mapping answers. */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/version.h"

static size_t pages(struct pecs_t *t, unsigned int n)
{
	return (size_t)n * (size_t)pecs_host(t)->page_size;
}

/* A mapped ring of 1 + 2 pages on a fresh sampling event; its fd in *fd. */
static void ring(struct pecs_t *t, struct pecs_ring *r, int *fd)
{
	struct pecs_attr a;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	*fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_ring_map(t, *fd, 2, PROT_READ | PROT_WRITE, r));
}

static long neg_errno(long r)
{
	return r == -1 ? -errno : r;
}

static int mapped(void *addr, size_t len)
{
	unsigned char v[16];

	return mincore(addr, len, v) == 0;
}

/* Address space nobody else gets: len bytes of PROT_NONE, released by the case. */
static uint8_t *reserve(struct pecs_t *t, size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		PECS_BROKEN(t, "reserving %zu bytes: %s", len, pecs_errname(errno));
	return p;
}

/* The suite unmaps what pecs_mmap() returned after the case: a range the case moved the
 * ring away from is held by a placeholder, so that unmap never reaches someone else's
 * memory. */
static void hold(void *addr, size_t len)
{
	mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
}

/* vma_to_resize(): VM_DONTEXPAND makes any growth EFAULT, in place or moved. */
PECS_CASE("Required.Mmap.Vma.MremapGrowEfault", "mmap", "MMAP-VMA-MREMAP-GROW-EFAULT")
{
	struct pecs_ring r;
	int fd;

	ring(t, &r, &fd);
	PECS_CHECK_ERR(t, neg_errno((long)mremap(r.meta, r.map_len, r.map_len + pages(t, 2), 0)),
		       EFAULT, "grown in place");
	PECS_CHECK_ERR(t, neg_errno((long)mremap(r.meta, r.map_len, r.map_len * 2,
						 MREMAP_MAYMOVE)),
		       EFAULT, "grown where it may move");
	PECS_CHECK_EQ(t, r.meta->data_size, r.data_size);
	PECS_CHECK_EQ(t, pecs_munmap(t, r.meta, r.map_len), 0);
}

/* Shrinking would split the vma: perf_mmap_may_split() says EINVAL. */
PECS_CASE("Required.Mmap.Vma.MremapShrinkEinval", "mmap", "MMAP-VMA-MREMAP-SHRINK-EINVAL")
{
	struct pecs_ring r;
	int fd;

	ring(t, &r, &fd);
	PECS_CHECK_ERR(t, neg_errno((long)mremap(r.meta, r.map_len, pages(t, 1), 0)), EINVAL);
	PECS_CHECK_ERR(t, neg_errno((long)mremap(r.meta, r.map_len, pages(t, 2),
						 MREMAP_MAYMOVE)),
		       EINVAL, "where it may move");
	PECS_CHECK(t, mapped(r.meta, r.map_len), "the ring is no longer mapped whole");
	PECS_CHECK_EQ(t, r.meta->data_size, r.data_size);
	PECS_CHECK_EQ(t, pecs_munmap(t, r.meta, r.map_len), 0);
}

/* Moved whole at its size, the ring is the same buffer at its new address, and the
 * munmap there is its last: the event then has no buffer and polls POLLHUP. */
PECS_CASE("Required.Mmap.Vma.MremapMovesWhole", "mmap,mmap.vma,poll", "MMAP-VMA-MREMAP-MOVE")
{
	struct pecs_ring r;
	uint8_t *area, *to;
	int fd, rev;

	ring(t, &r, &fd);
	area = reserve(t, r.map_len + pages(t, 2));
	to = area + pages(t, 1);
	PECS_CHECK_EQ(t, (long)mremap(r.meta, r.map_len, r.map_len,
				      MREMAP_MAYMOVE | MREMAP_FIXED, to),
		      (long)to);
	PECS_CHECK(t, !mapped(r.meta, r.map_len), "the old range is still mapped");
	hold(r.meta, r.map_len);
	PECS_CHECK_EQ(t, ((const struct pecs_mmap_page *)to)->data_size, r.data_size);
	rev = pecs_poll(t, fd, POLLIN, 0);
	PECS_CHECK(t, rev == 0, "moved: revents %s, expected 0", pecs_retname(rev));
	PECS_CHECK_EQ(t, pecs_munmap(t, to, r.map_len), 0);
	rev = pecs_poll(t, fd, POLLIN, 0);
	PECS_CHECK(t, rev >= 0 && (rev & POLLHUP), "unmapped at its new address: revents %s, "
		   "expected POLLHUP", pecs_retname(rev));
	munmap(area, r.map_len + pages(t, 2));
}

/* MAP_FIXED unmaps what lies in its range first, and that unmap may not split the ring:
 * EINVAL over its head, its middle or its tail, and the ring stays. Linux 6.1 answers
 * ENOMEM for the same refusal (measured on 6.1.176 in the VM; 6.12.118 and 6.18 say
 * EINVAL): its mmap_region() gives ENOMEM for any failed unmap of the range. */
static int cut_errno(struct pecs_t *t)
{
	return pecs_linux_before(t, 6, 12) ? ENOMEM : EINVAL;
}

PECS_CASE("Required.Mmap.Vma.MapFixedOverPartEinval", "mmap", "MMAP-VMA-FIXED-OVER-PART-EINVAL")
{
	static const unsigned int at[] = {0, 1, 2};
	struct pecs_ring r;
	int fd;

	ring(t, &r, &fd);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		void *p = (uint8_t *)r.meta + pages(t, at[i]);

		PECS_CHECK_ERR(t, neg_errno((long)mmap(p, pages(t, 1), PROT_READ | PROT_WRITE,
						       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
						       -1, 0)),
			       cut_errno(t), "an anonymous page over the ring's page %u", at[i]);
	}
	PECS_CHECK(t, mapped(r.meta, r.map_len), "the ring is no longer mapped whole");
	PECS_CHECK_EQ(t, r.meta->data_size, r.data_size);
	PECS_CHECK_EQ(t, pecs_munmap(t, r.meta, r.map_len), 0);
}

/* Over the whole ring MAP_FIXED succeeds: the ring's mapping is closed as by munmap, so
 * the event, mapped nowhere else, polls POLLHUP. */
PECS_CASE("Required.Mmap.Vma.MapFixedOverWholeUnmaps", "mmap,mmap.vma,poll",
	  "MMAP-VMA-FIXED-OVER-WHOLE")
{
	struct pecs_ring r;
	void *p;
	int fd, rev;

	ring(t, &r, &fd);
	p = mmap(r.meta, r.map_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	PECS_CHECK(t, p == (void *)r.meta, "mmap over the ring: %s",
		   pecs_retname(neg_errno((long)p)));
	rev = pecs_poll(t, fd, POLLIN, 0);
	PECS_CHECK(t, rev >= 0 && (rev & POLLHUP), "mapped over: revents %s, expected POLLHUP",
		   pecs_retname(rev));
}

/* VM_DONTCOPY: the child of fork(2) has nothing at the ring's address. */
PECS_CASE("Required.Mmap.Vma.ForkChildHasNoRing", "mmap", "MMAP-VMA-DONTCOPY")
{
	struct pecs_ring r;
	int fd, status;
	pid_t kid;

	ring(t, &r, &fd);
	kid = fork();
	if (kid == 0)
		_exit(mapped(r.meta, r.map_len) ? 1 : 0);
	if (kid < 0)
		PECS_BROKEN(t, "fork: %s", pecs_errname(errno));
	PECS_CHECK_EQ(t, waitpid(kid, &status, 0), kid);
	PECS_CHECK(t, WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "the child of fork has the ring mapped");
	PECS_CHECK(t, mapped(r.meta, r.map_len), "the parent lost its ring");
}

/* MAP_FIXED places the ring where asked; MAP_FIXED_NOREPLACE over a mapping is EEXIST, an
 * address off a page EINVAL, and a second ring over part of the first EINVAL (the split
 * again). */
PECS_CASE("Required.Mmap.Vma.MapFixedPlacesRing", "mmap", "MMAP-VMA-FIXED-PLACES")
{
	struct pecs_attr a;
	size_t len = pages(t, 3), span = len + pages(t, 4);
	uint8_t *area;
	void *addr;
	int fd, other;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	other = PECS_OPEN(t, &a, 0, -1, -1, 0);
	area = reserve(t, span);
	addr = area + pages(t, 2);
	PECS_CHECK_OK(t, pecs_mmap(t, fd, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				   0, &addr));
	PECS_CHECK(t, addr == area + pages(t, 2), "placed at %p, asked for %p", addr,
		   (void *)(area + pages(t, 2)));
	PECS_CHECK_EQ(t, ((const struct pecs_mmap_page *)addr)->data_size, pages(t, 2));

	void *again = area + pages(t, 2);
	PECS_CHECK_ERR(t, pecs_mmap(t, other, len, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_FIXED_NOREPLACE, 0, &again),
		       EEXIST, "MAP_FIXED_NOREPLACE over the first ring");
	void *off = area + 1;
	PECS_CHECK_ERR(t, pecs_mmap(t, other, len, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_FIXED, 0, &off),
		       EINVAL, "an address off a page");
	void *over = area + pages(t, 3);
	PECS_CHECK_ERR(t, pecs_mmap(t, other, len, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_FIXED, 0, &over),
		       cut_errno(t), "a second ring over the first one's last two pages");
	PECS_CHECK_EQ(t, ((const struct pecs_mmap_page *)addr)->data_size, pages(t, 2));
	PECS_CHECK_EQ(t, pecs_munmap(t, addr, len), 0);
	munmap(area, span);
}
