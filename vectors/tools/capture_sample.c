/* Captures one PERF_RECORD_SAMPLE from the running kernel, for the record_layout
 * cross-check (harness/tests/test_vectors_kernel.py).
 *
 *   capture_sample SAMPLE_TYPE READ_FORMAT NR_MEMBERS
 *
 * Opens a user-only TASK_CLOCK sampling event on this thread (period 100 us) and, when
 * READ_FORMAT has GROUP, NR_MEMBERS-1 counting TASK_CLOCK siblings; spins until a sample
 * is in the ring and prints, one per line:
 *   pid <pid> tid <tid> ncpus <n>
 *   ids <leader id> [<member id>...]
 *   record <hex bytes of the first sample record>
 * On failure it prints "error <step> <errno name>" and exits 2 (open refused) or 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pecs/abi.h"

#define DATA_PAGES 8
#define MAX_MEMBERS 8

static int open_event(struct pecs_attr *attr, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, attr, 0, -1, group_fd, 0);
}

static int fail(const char *step, int err, int code)
{
	printf("error %s %s\n", step, strerrorname_np(err) ? strerrorname_np(err) : "?");
	return code;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The leader samples; NR-1 counting siblings make it a group. 0, or fail()'s code. */
static int open_group(struct pecs_attr *attr, unsigned nr, int *fds, uint64_t *ids)
{
	fds[0] = open_event(attr, -1);
	if (fds[0] < 0)
		return fail("open", errno, 2);
	for (unsigned i = 1; i < nr; i++) {
		struct pecs_attr member = *attr;

		/* counting siblings: only the leader samples */
		member.sample_period = 0;
		member.sample_type = 0;
		member.flags &= ~PECS_ATTR_DISABLED;
		fds[i] = open_event(&member, fds[0]);
		if (fds[i] < 0)
			return fail("open_member", errno, 2);
	}
	for (unsigned i = 0; i < nr; i++)
		if (ioctl(fds[i], PECS_IOC_ID, &ids[i]))
			return fail("ioc_id", errno, 1);
	return 0;
}

/* Runs the leader until data_head moves (or 5 s pass), leaving the ring's head then in
 * *head. 0, or fail()'s code. */
static int run_until_sampled(int leader, const struct pecs_mmap_page *meta, uint64_t *head)
{
	/* Busy work for TASK_CLOCK to count, until the first sample lands. The volatile keeps
	 * the compiler from deleting the loop, whose sum is otherwise unused. */
	volatile uint64_t spin = 0;
	double deadline = now() + 5.0;

	if (ioctl(leader, PECS_IOC_ENABLE, 0))
		return fail("enable", errno, 1);
	while (__atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) == 0 && now() < deadline)
		for (int i = 0; i < 100000; i++)
			spin += (uint64_t)i;
	ioctl(leader, PECS_IOC_DISABLE, 0);
	*head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	return 0;
}

int main(int argc, char **argv)
{
	struct pecs_attr attr;
	int fds[MAX_MEMBERS];
	uint64_t ids[MAX_MEMBERS];
	long page = sysconf(_SC_PAGESIZE);
	unsigned nr;

	if (argc != 4)
		return fprintf(stderr, "usage: %s SAMPLE_TYPE READ_FORMAT NR_MEMBERS\n", argv[0]), 1;
	nr = (unsigned)strtoul(argv[3], NULL, 0);
	if (nr < 1 || nr > MAX_MEMBERS)
		return fprintf(stderr, "NR_MEMBERS must be 1..%d\n", MAX_MEMBERS), 1;

	memset(&attr, 0, sizeof(attr));
	attr.type = PECS_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PECS_SW_TASK_CLOCK;
	attr.sample_period = 100000;
	attr.sample_type = strtoull(argv[1], NULL, 0);
	attr.read_format = strtoull(argv[2], NULL, 0);
	attr.flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	int err = open_group(&attr, nr, fds, ids);
	if (err)
		return err;

	size_t len = (size_t)page * (1 + DATA_PAGES);
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	if (map == MAP_FAILED)
		return fail("mmap", errno, 1);
	/* Not volatile: data_head, the one field the kernel moves while we watch, is read
	 * with acquire loads, which also order the reads of the records after it; the
	 * other fields read here are fixed once the buffer is mapped. */
	const struct pecs_mmap_page *meta = map;
	const uint8_t *data = (const uint8_t *)map + meta->data_offset;
	uint64_t head = 0, off = 0;
	err = run_until_sampled(fds[0], meta, &head);
	if (err)
		return err;
	struct pecs_record_header h;

	for (;;) {
		if (off + sizeof(h) > head)
			return fail("no_sample", ETIME, 1);
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > meta->data_size)
			return fail("bad_record", EPROTO, 1);
		if (h.type == PECS_RECORD_SAMPLE)
			break;
		off += h.size;
	}
	printf("pid %d tid %d ncpus %ld\n", getpid(), gettid(), sysconf(_SC_NPROCESSORS_CONF));
	printf("ids");
	for (unsigned i = 0; i < nr; i++)
		printf(" %llu", (unsigned long long)ids[i]);
	printf("\nrecord ");
	for (unsigned i = 0; i < h.size; i++)
		printf("%02x", data[off + i]);
	printf("\n");
	return 0;
}
