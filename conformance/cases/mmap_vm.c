/* mmap() of an event fd refused before perf_mmap() sees it, by the syscall and do_mmap()
 * (arch/x86/kernel/sys_x86_64.c, mm/mmap.c), and the sizes perf_mmap() refuses with
 * ENOMEM: classes the differential tool found ref answering otherwise. Lengths are in
 * the host's pages. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "pecs/case.h"
#include "pecs/toolkit/version.h"

#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

static int open_event(struct pecs_t *t)
{
	struct pecs_attr a;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	return PECS_OPEN(t, &a, 0, -1, -1, 0);
}

static size_t pages(struct pecs_t *t, uint64_t n)
{
	return (size_t)n * (size_t)pecs_host(t)->page_size;
}

/* The page-alignment check of the offset comes before the fd is looked up; a length of
 * zero only after it. */
PECS_CASE("Required.Mmap.Vm.UnalignedOffsetBeforeFd", "mmap", "MMAP-VM-ORDER")
{
	struct pecs_attr a;
	void *addr;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	int fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_close(t, fd));
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED, 1, &addr), EINVAL,
		       "closed fd, offset 1");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, 0, PROT_READ, MAP_SHARED, 0, &addr), EBADF,
		       "closed fd, length 0");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED,
				    -(off_t)pecs_host(t)->page_size, &addr),
		       EBADF, "closed fd, offset -1 page");
}

/* An offset whose page number and length pass the end of what a file may map
 * (file_mmap_ok(): ULONG_MAX for an anonymous inode) is EOVERFLOW, before the map type
 * or the event is looked at. One page at offset -2 pages stays inside and reaches
 * perf_mmap(), whose non-zero offset is an AUX area no software event has. */
PECS_CASE("Required.Mmap.Vm.OffsetPastEndEoverflow", "mmap", "MMAP-VM-EOVERFLOW")
{
	off_t ps = (off_t)pecs_host(t)->page_size;
	int fd = open_event(t);
	void *addr;

	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 1), PROT_READ, MAP_SHARED, -ps, &addr),
		       EOVERFLOW, "1 page at -1 page");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED, -ps, &addr),
		       EOVERFLOW, "2 pages at -1 page");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 3), PROT_READ, MAP_SHARED, -2 * ps, &addr),
		       EOVERFLOW, "3 pages at -2 pages");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_PRIVATE, -ps, &addr),
		       EOVERFLOW, "MAP_PRIVATE, 2 pages at -1 page");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 1), PROT_READ, MAP_SHARED, -2 * ps, &addr),
		       EINVAL, "1 page at -2 pages");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, 0, PROT_READ, MAP_SHARED, -ps, &addr), EINVAL,
		       "length 0 at -1 page");
	/* nothing was left behind */
	PECS_CHECK_OK(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED, 0, &addr));
}

/* MAP_SHARED_VALIDATE refuses a flag the file does not support (MAP_SYNC: perf fds are
 * no DAX file) with EOPNOTSUPP, ahead of the map type's other checks; MAP_SHARED drops
 * it silently. A map type that is neither shared nor private is EINVAL there too. */
PECS_CASE("Required.Mmap.Vm.ValidateRefusesSyncEopnotsupp", "mmap", "MMAP-VM-VALIDATE")
{
	int fd = open_event(t);
	void *addr;

	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED_VALIDATE | MAP_SYNC,
				    0, &addr),
		       EOPNOTSUPP, "MAP_SHARED_VALIDATE | MAP_SYNC");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 4), PROT_READ | PROT_EXEC,
				    MAP_SHARED_VALIDATE | MAP_SYNC, 0, &addr),
		       EOPNOTSUPP, "with PROT_EXEC and a length perf_mmap() refuses");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ | PROT_EXEC, 0, 0, &addr),
		       EINVAL, "map type 0 with PROT_EXEC");
	PECS_CHECK_OK(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED | MAP_SYNC, 0, &addr),
		      "MAP_SHARED | MAP_SYNC");
	PECS_CHECK_OK(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED_VALIDATE, 0, &addr),
		      "MAP_SHARED_VALIDATE, a second mapping of the same ring");
}

/* The checks past do_mmap()'s room for the range are reached only where this process
 * has that much address space free: under a sanitizer, whose shadow memory takes most
 * of it, a range of 2^31 pages is do_mmap()'s ENOMEM before perf_mmap() sees it. */
static void needs_room(struct pecs_t *t, size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		PECS_ENV_SKIP(t, "this process has no room for %zu bytes of address space (a "
			      "sanitizer's shadow memory?): the checks after do_mmap()'s cannot be "
			      "reached", len);
	munmap(p, len);
}

/* A length the address space has no room for (past TASK_SIZE, or past the end of
 * size_t once rounded up to a page) is ENOMEM from do_mmap(), in every identity. */
PECS_CASE("Required.Mmap.Vm.HugeLengthEnomem", "mmap", "MMAP-VM-HUGE-ENOMEM")
{
	int fd = open_event(t);
	void *addr;

	PECS_CHECK_ERR(t, pecs_mmap(t, fd, SIZE_MAX, PROT_READ, MAP_SHARED, 0, &addr), ENOMEM,
		       "SIZE_MAX bytes");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, SIZE_MAX - pages(t, 2) + 1, PROT_READ, MAP_SHARED, 0,
				    &addr),
		       ENOMEM, "SIZE_MAX less 2 pages");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, (size_t)1 << 47, PROT_READ, MAP_SHARED, 0, &addr),
		       ENOMEM, "128 TiB");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, ((size_t)1 << 47) + pages(t, 1), PROT_READ,
				    MAP_SHARED, 0, &addr),
		       ENOMEM, "128 TiB and a page");
	needs_room(t, pages(t, 1ull << 31));
	/* A mapping of more than INT_MAX pages: measured ENOMEM on 6.18 before its data
	 * area's size is looked at (2^31 - 1 data pages, no power of two); the 6.12 source
	 * has that check on the AUX path only, so there it is the size's EINVAL. */
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 1ull << 31), PROT_READ, MAP_SHARED, 0, &addr),
		       pecs_linux_before(t, 6, 18) ? EINVAL : ENOMEM, "2^31 pages");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, (1ull << 31) - 1), PROT_READ, MAP_SHARED, 0,
				    &addr),
		       EINVAL, "2^31 - 1 pages: the size's EINVAL");
}

static int overcommit_policy(void)
{
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* A private writable mapping is charged to the commit limit before the file's mmap
 * (mmap_region(): accountable_mapping()); 8 TiB is past what the heuristic (0) and the
 * strict (2) policy allow on any host this runs on, so it is ENOMEM rather than
 * perf_mmap()'s EINVAL for MAP_PRIVATE; MAP_NORESERVE (no charge) reaches that EINVAL. */
PECS_CASE("Required.Mmap.Vm.PrivateWritableCommitEnomem", "mmap", "MMAP-VM-COMMIT-ENOMEM")
{
	size_t len = pages(t, 1ull << 31);
	int fd = open_event(t), policy = overcommit_policy();
	void *addr;

	if (policy < 0)
		PECS_ENV_SKIP(t, "/proc/sys/vm/overcommit_memory cannot be read");
	if (policy == 1)
		PECS_ENV_SKIP(t, "vm.overcommit_memory is 1: every mapping is allowed its commit");
	needs_room(t, len);
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0, &addr),
		       ENOMEM, "2^31 pages, MAP_PRIVATE, PROT_READ | PROT_WRITE");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, len, PROT_WRITE, MAP_PRIVATE, 0, &addr), ENOMEM,
		       "2^31 pages, MAP_PRIVATE, PROT_WRITE");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE,
				    0, &addr),
		       EINVAL, "2^31 pages, MAP_PRIVATE | MAP_NORESERVE");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, len, PROT_READ, MAP_PRIVATE, 0, &addr), EINVAL,
		       "2^31 pages, MAP_PRIVATE, PROT_READ");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 3), PROT_READ | PROT_WRITE, MAP_PRIVATE, 0,
				    &addr),
		       EINVAL, "3 pages, MAP_PRIVATE");
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The ring's page pointers share one allocation of at most 2^MAX_PAGE_ORDER pages
 * with its header (rb_alloc()), so 2^19 data pages of 4 KiB (2 GiB) are ENOMEM at once,
 * before a page is allocated, once the mlock charge passed: a caller the locked-memory
 * limits hold is refused there first (EPERM). */
PECS_CASE("Required.Mmap.Vm.RingPastAllocatorEnomem", "mmap", "MMAP-RING-ALLOC-ENOMEM")
{
	const struct pecs_host_facts *h = pecs_host(t);
	uint64_t data = (uint64_t)h->page_size * 1024 / sizeof(void *);
	int fd = open_event(t), expect = ENOMEM;
	struct rlimit rl;
	void *addr;

	if (!h->privileged && h->paranoid >= 0 &&
	    (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY))
		PECS_ENV_SKIP(t, "RLIMIT_MEMLOCK is unlimited: an unprivileged caller would "
				 "be charged the ring's pages");
	if (!h->privileged && h->paranoid >= 0)
		expect = EPERM;
	int64_t before = thread_cpu_ns();
	int ret = pecs_mmap(t, fd, pages(t, data + 1), PROT_READ | PROT_WRITE, MAP_SHARED, 0,
			    &addr);
	int64_t spent = thread_cpu_ns() - before;
	PECS_CHECK_ERR(t, ret, expect, "%llu data pages", (unsigned long long)data);
	/* the kernel answers in microseconds; 100 ms of CPU would be pages being cleared */
	PECS_CHECK(t, spent < 100000000, "the refusal took %lld ns of CPU", (long long)spent);
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 2 * data + 1), PROT_READ, MAP_SHARED, 0, &addr),
		       expect, "%llu data pages", (unsigned long long)(2 * data));
	/* nothing was charged or left behind */
	PECS_CHECK_OK(t, pecs_mmap(t, fd, pages(t, 2), PROT_READ, MAP_SHARED, 0, &addr));
}

/* perf_mmap() checks the data area's size before it charges the pages, so a size that
 * is no power of two is EINVAL even when it is far past every locked-memory limit. */
PECS_CASE("Required.Mmap.Vm.OddSizePastMlockEinval", "mmap", "MMAP-LEN-EINVAL")
{
	int fd = open_event(t);
	void *addr;

	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, 3ull * 65536 + 1), PROT_READ | PROT_WRITE,
				    MAP_SHARED, 0, &addr),
		       EINVAL, "3 * 2^16 data pages");
	PECS_CHECK_ERR(t, pecs_mmap(t, fd, pages(t, (1ull << 20) + 3), PROT_READ, MAP_SHARED, 0,
				    &addr),
		       EINVAL, "2^20 + 2 data pages");
}
