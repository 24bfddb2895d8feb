/* PERF_RECORD_SAMPLE and PERF_RECORD_LOST from the encoder.
 *
 * Expected bytes come from (a) perf_output_sample()/perf_prepare_sample() and
 * __perf_event__output_id_sample() in kernel/events/core.c (6.12), spelled out by hand
 * per field, and (b) a live record from the running kernel, parsed with the measured
 * field order (REC-SAMPLE-ORDER in docs/behaviours.md) and re-encoded from its own values.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ref/record/record.h"

static const uint64_t ips5[5] = { 0x401000, 0x402000, 0x403000, 0x404000, 0x405000 };

static struct pecs_sample base_sample(void)
{
	struct pecs_sample s = {
		.size = sizeof(s),
		.pid = 0x1234,
		.tid = 0x5678,
		.time = 0x0102030405060708ull,
		.cpu = 1,
		.misc = 0,
		.period = 0,
		.addr = 0xdead000,
		.nr_ips = 5,
		.ips = ips5,
	};
	return s;
}

static struct ref_record_desc base_desc(uint64_t sample_type)
{
	struct ref_record_desc d = {
		.sample_type = sample_type,
		.read_format = 0,
		.sample_id_all = 0,
		.id = 77,
		.stream_id = 78,
		.max_stack = 127,
		.period = 100000,
		.code_page_size = 4096,
		.cgroup = 0x99,
	};
	return d;
}

static uint64_t header_word(uint32_t type, uint16_t misc, uint16_t size)
{
	return (uint64_t)type | (uint64_t)misc << 32 | (uint64_t)size << 48;
}

static uint64_t pair(uint32_t lo, uint32_t hi)
{
	return (uint64_t)lo | (uint64_t)hi << 32;
}

/* One sample_type bit at a time: the field's bytes after the 8-byte header. */
struct field_case {
	uint64_t bit;
	size_t nwords;
	uint64_t words[8];
};

static void test_each_field_alone(void **state)
{
	/* perf_prepare_sample() defaults for what a software event has nothing of:
	 * RAW {u32 4; u32 0}; BRANCH_STACK nr 0; REGS_* abi 0 (NONE); STACK_USER size 0;
	 * WEIGHT 0; DATA_SRC PERF_MEM_NA; TRANSACTION 0; AUX size 0. */
	const struct field_case cases[] = {
		{ PECS_SAMPLE_IDENTIFIER, 1, { 77 } },
		{ PECS_SAMPLE_IP, 1, { 0x401000 } },
		{ PECS_SAMPLE_TID, 1, { pair(0x1234, 0x5678) } },
		{ PECS_SAMPLE_TIME, 1, { 0x0102030405060708ull } },
		{ PECS_SAMPLE_ADDR, 1, { 0xdead000 } },
		{ PECS_SAMPLE_ID, 1, { 77 } },
		{ PECS_SAMPLE_STREAM_ID, 1, { 78 } },
		{ PECS_SAMPLE_CPU, 1, { pair(1, 0) } },
		{ PECS_SAMPLE_PERIOD, 1, { 100000 } },
		{ PECS_SAMPLE_CALLCHAIN, 7,
		  { 6, PECS_CONTEXT_USER, 0x401000, 0x402000, 0x403000, 0x404000, 0x405000 } },
		{ PECS_SAMPLE_RAW, 1, { pair(4, 0) } },
		{ PECS_SAMPLE_BRANCH_STACK, 1, { 0 } },
		{ PECS_SAMPLE_REGS_USER, 1, { 0 } },
		{ PECS_SAMPLE_STACK_USER, 1, { 0 } },
		{ PECS_SAMPLE_WEIGHT, 1, { 0 } },
		{ PECS_SAMPLE_DATA_SRC, 1, { 0x1e05080021ull } },
		{ PECS_SAMPLE_TRANSACTION, 1, { 0 } },
		{ PECS_SAMPLE_REGS_INTR, 1, { 0 } },
		{ PECS_SAMPLE_PHYS_ADDR, 1, { 0 } },
		{ PECS_SAMPLE_AUX, 1, { 0 } },
		{ PECS_SAMPLE_CGROUP, 1, { 0x99 } },
		{ PECS_SAMPLE_DATA_PAGE_SIZE, 1, { 0 } },
		{ PECS_SAMPLE_CODE_PAGE_SIZE, 1, { 4096 } },
		{ PECS_SAMPLE_WEIGHT_STRUCT, 1, { 0 } },
	};
	struct pecs_sample s = base_sample();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ref_record_desc d = base_desc(cases[i].bit);
		uint64_t out[16];
		size_t size = 8 * (1 + cases[i].nwords);

		memset(out, 0xcc, sizeof(out));
		assert_int_equal(ref_record_sample_size(&d, &s, NULL), (ssize_t)size);
		assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)),
				 (ssize_t)size);
		assert_int_equal(out[0], header_word(PECS_RECORD_SAMPLE, PECS_MISC_USER,
						     (uint16_t)size));
		assert_memory_equal(&out[1], cases[i].words, 8 * cases[i].nwords);
		assert_int_equal(out[1 + cases[i].nwords], 0xccccccccccccccccull);
	}
}

static void test_read_field(void **state)
{
	const struct ref_read_member m[2] = { { 10, 77, 1 }, { 20, 79, 2 } };
	struct ref_read_values rv = { 500, 400, 2, m };
	struct ref_record_desc d = base_desc(PECS_SAMPLE_READ);
	struct pecs_sample s = base_sample();
	/* 8 header + 8 nr + 16 times + 2 x 24 per counter = 80 */
	const uint64_t want[] = { header_word(9, 2, 80), 2, 500, 400, 10, 77, 1, 20, 79, 2 };
	uint64_t out[16];

	(void)state;
	d.read_format = PECS_FORMAT_GROUP | PECS_FORMAT_TOTAL_TIME_ENABLED |
			PECS_FORMAT_TOTAL_TIME_RUNNING | PECS_FORMAT_ID | PECS_FORMAT_LOST;
	assert_int_equal(ref_record_encode_sample(&d, &s, &rv, out, sizeof(out)), 80);
	assert_memory_equal(out, want, sizeof(want));
	/* READ without values is a caller error, not a silent empty field. */
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), -EINVAL);
	/* A single-counter layout. */
	d.read_format = PECS_FORMAT_ID;
	rv.nr = 1;
	assert_int_equal(ref_record_encode_sample(&d, &s, &rv, out, sizeof(out)), 24);
	assert_int_equal(out[1], 10);
	assert_int_equal(out[2], 77);
}

/* Every field at once, each with a value that tells it apart, in perf_output_sample()
 * order. */
static void test_field_order(void **state)
{
	const struct ref_read_member m[1] = { { 0xee01, 0, 0 } };
	struct ref_read_values rv = { 0xee02, 0xee03, 1, m };
	struct ref_record_desc d = base_desc(PECS_SAMPLE_MAX - 1);
	struct pecs_sample s = base_sample();
	const uint64_t want[] = {
		77,                                   /* IDENTIFIER */
		0x401000,                             /* IP */
		pair(0x1234, 0x5678),                 /* TID */
		0x0102030405060708ull,                /* TIME */
		0xdead000,                            /* ADDR */
		77,                                   /* ID */
		78,                                   /* STREAM_ID */
		pair(1, 0),                           /* CPU */
		0x7777,                               /* PERIOD (the sample's own) */
		0xee01, 0xee02, 0xee03,               /* READ: value, TE, TR */
		6, PECS_CONTEXT_USER, 0x401000, 0x402000, 0x403000, 0x404000, 0x405000,
		pair(4, 0),                           /* RAW */
		0,                                    /* BRANCH_STACK nr */
		0,                                    /* REGS_USER abi */
		0,                                    /* STACK_USER size */
		0,                                    /* WEIGHT (one u64 for both kinds) */
		0x1e05080021ull,                      /* DATA_SRC */
		0,                                    /* TRANSACTION */
		0,                                    /* REGS_INTR abi */
		0,                                    /* PHYS_ADDR */
		0x99,                                 /* CGROUP */
		0,                                    /* DATA_PAGE_SIZE */
		4096,                                 /* CODE_PAGE_SIZE */
		0,                                    /* AUX size */
	};
	uint64_t out[64];
	size_t size = 8 + sizeof(want);

	(void)state;
	s.period = 0x7777;
	s.misc = PECS_MISC_USER | PECS_MISC_EXACT_IP;
	d.read_format = PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING;
	assert_int_equal(ref_record_encode_sample(&d, &s, &rv, out, sizeof(out)), (ssize_t)size);
	assert_int_equal(out[0], header_word(9, PECS_MISC_USER | PECS_MISC_EXACT_IP,
					     (uint16_t)size));
	assert_memory_equal(&out[1], want, sizeof(want));
}

static void test_misc_and_markers(void **state)
{
	struct ref_record_desc d = base_desc(PECS_SAMPLE_CALLCHAIN);
	struct pecs_sample s = base_sample();
	uint64_t out[16];

	(void)state;
	s.misc = PECS_MISC_KERNEL;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 64);
	assert_int_equal(out[0] >> 32 & 0xffff, PECS_MISC_KERNEL);
	assert_int_equal(out[2], PECS_CONTEXT_KERNEL);
	s.misc = PECS_MISC_GUEST_USER;
	ref_record_encode_sample(&d, &s, NULL, out, sizeof(out));
	assert_int_equal(out[2], PECS_CONTEXT_GUEST_USER);
	/* No ips: the kernel still writes the marker (nr 1), and IP is 0. */
	s.misc = 0;
	s.nr_ips = 0;
	d.sample_type |= PECS_SAMPLE_IP;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 32);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 1);
	assert_int_equal(out[3], PECS_CONTEXT_USER);
}

/* exclude_callchain_user on a user sample: nr 0 and no marker, measured on Linux 6.18
 * (a 24-byte IP|CALLCHAIN record). The kernel flag matters only for kernel samples. */
static void test_callchain_excluded(void **state)
{
	struct ref_record_desc d = base_desc(PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN);
	struct pecs_sample s = base_sample();
	const uint64_t want[] = { header_word(9, 2, 24), 0x401000, 0 };
	uint64_t out[16];

	(void)state;
	d.exclude_callchain_user = 1;
	assert_int_equal(ref_record_sample_size(&d, &s, NULL), 24);
	assert_int_equal(ref_record_callchain_room(&d, &s, NULL), 0);
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 24);
	assert_memory_equal(out, want, sizeof(want));
	d.exclude_callchain_user = 0;
	d.exclude_callchain_kernel = 1;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 72);
	s.misc = PECS_MISC_KERNEL;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 24);
	assert_int_equal(out[2], 0);
}

static void test_callchain_max_stack(void **state)
{
	struct ref_record_desc d = base_desc(PECS_SAMPLE_IP | PECS_SAMPLE_CALLCHAIN);
	struct pecs_sample s = base_sample();
	uint64_t *ips = malloc(1000 * sizeof(*ips));
	uint64_t *out = malloc(65536);
	uint32_t i;

	(void)state;
	for (i = 0; i < 1000; i++)
		ips[i] = 0x7f0000000000ull + i;
	s.ips = ips;
	s.nr_ips = 1000;
	/* max_stack counts ips only; the marker comes on top (perf_callchain_store()). */
	assert_int_equal(ref_record_callchain_room(&d, &s, NULL), 127);
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, 65536),
			 8 + 8 + 8 + 8 + 127 * 8);
	assert_int_equal(out[2], 128);
	assert_int_equal(out[3], PECS_CONTEXT_USER);
	assert_int_equal(out[4], ips[0]);
	assert_int_equal(out[4 + 126], ips[126]);
	free(ips);
	free(out);
}

/* The u16 size must never wrap, whatever comes in: the callchain gives way. */
static void test_u16_never_overflows(void **state)
{
	static struct ref_read_member many[2047];
	struct ref_read_values rv = { 1, 2, 2047, many };
	struct ref_record_desc d = base_desc(PECS_SAMPLE_MAX - 1);
	struct pecs_sample s = base_sample();
	uint64_t *ips = calloc(70000, sizeof(*ips));
	uint8_t *out = malloc(1 << 17);
	uint32_t nrs[] = { 8000, 8100, 8180, 8187, 8188, 8189, 8190, 65535, 70000 };
	size_t i;

	(void)state;
	d.max_stack = 0; /* no limit but the header's */
	s.ips = ips;
	for (int with_read = 0; with_read < 2; with_read++) {
		d.read_format = with_read ? PECS_FORMAT_GROUP | PECS_FORMAT_ID : 0;
		rv.nr = with_read ? 1023 : 1; /* 8 + 1023 x 16 = 16376 bytes of READ */
		for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
			ssize_t n;
			uint16_t hsize;
			uint64_t nr;
			size_t chain_at;

			s.nr_ips = nrs[i];
			n = ref_record_encode_sample(&d, &s, &rv, out, 1 << 17);
			assert_true(n > 0);
			assert_true(n <= 65535);
			assert_int_equal(n % 8, 0);
			memcpy(&hsize, out + 6, 2);
			assert_int_equal(hsize, n);
			assert_int_equal(ref_record_sample_size(&d, &s, &rv), n);
			/* nr sits after 9 u64 fields and the READ part. */
			chain_at = 8 + 9 * 8 + ref_record_read_size(d.read_format, rv.nr);
			memcpy(&nr, out + chain_at, 8);
			assert_int_equal(nr, 1 + ref_record_callchain_room(&d, &s, &rv));
			assert_true(nr - 1 <= nrs[i]);
			/* Trimmed only as far as needed: one more ip would not have fit. */
			if (nr - 1 < nrs[i])
				assert_true(n + 8 > 65535);
		}
	}
	/* A READ part of exactly 16 KiB still goes out; one over it cannot at all. */
	d.read_format = PECS_FORMAT_GROUP;
	rv.nr = 2047;
	assert_int_equal(ref_record_read_size(d.read_format, rv.nr), 16384);
	assert_true(ref_record_encode_sample(&d, &s, &rv, out, 1 << 17) > 16384);
	d.read_format = PECS_FORMAT_GROUP | PECS_FORMAT_ID;
	assert_int_equal(ref_record_encode_sample(&d, &s, &rv, out, 1 << 17), -E2BIG);
	free(ips);
	free(out);
}

static void test_errors(void **state)
{
	struct ref_record_desc d = base_desc(PECS_SAMPLE_IP | PECS_SAMPLE_TID);
	struct pecs_sample s = base_sample();
	uint64_t out[8];

	(void)state;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, 23), -ENOSPC);
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, 24), 24);
	d.sample_type = PECS_SAMPLE_MAX;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), -EINVAL);
	d = base_desc(PECS_SAMPLE_IP);
	d.read_format = PECS_FORMAT_MAX;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), -EINVAL);
	d = base_desc(PECS_SAMPLE_IP);
	assert_int_equal(ref_record_encode_sample(NULL, &s, NULL, out, sizeof(out)), -EINVAL);
	s.ips = NULL;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), -EINVAL);
}

static void test_lost_and_trailer(void **state)
{
	struct ref_record_desc d = base_desc(PECS_SAMPLE_MAX - 1);
	struct pecs_sample s = base_sample();
	/* __perf_event__output_id_sample(): TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
	const uint64_t want[] = { header_word(PECS_RECORD_LOST, 0, 72), 77, 5,
				  pair(0x1234, 0x5678), 0x0102030405060708ull, 77, 78,
				  pair(1, 0), 77 };
	uint64_t out[16];

	(void)state;
	/* Without sample_id_all: 24 bytes bare. */
	assert_int_equal(ref_record_id_trailer_size(&d), 0);
	assert_int_equal(ref_record_encode_lost(&d, 5, &s, out, sizeof(out)), 24);
	assert_int_equal(out[0], header_word(PECS_RECORD_LOST, 0, 24));
	assert_int_equal(out[1], 77);
	assert_int_equal(out[2], 5);
	d.sample_id_all = 1;
	assert_int_equal(ref_record_id_trailer_size(&d), 48);
	assert_int_equal(ref_record_encode_lost(&d, 5, &s, out, sizeof(out)), 72);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(ref_record_encode_lost(&d, 5, &s, out, 71), -ENOSPC);
	/* Only the id fields join the trailer. */
	d.sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_TIME | PECS_SAMPLE_CALLCHAIN;
	assert_int_equal(ref_record_encode_lost(&d, 5, NULL, out, sizeof(out)), 32);
	assert_int_equal(out[3], 0);
	assert_int_equal(ref_record_encode_id_trailer(&d, &s, out, sizeof(out)), 8);
	assert_int_equal(out[0], 0x0102030405060708ull);
}

/* ---- a record from the running kernel ------------------------------------------------ */

#define LIVE_TYPES                                                                        \
	(PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |   \
	 PECS_SAMPLE_ADDR | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_CPU |    \
	 PECS_SAMPLE_PERIOD | PECS_SAMPLE_READ | PECS_SAMPLE_CALLCHAIN | PECS_SAMPLE_RAW |\
	 PECS_SAMPLE_WEIGHT | PECS_SAMPLE_DATA_SRC | PECS_SAMPLE_TRANSACTION |            \
	 PECS_SAMPLE_PHYS_ADDR | PECS_SAMPLE_CGROUP | PECS_SAMPLE_DATA_PAGE_SIZE |        \
	 PECS_SAMPLE_CODE_PAGE_SIZE)
#define LIVE_FORMAT                                                                       \
	(PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING | PECS_FORMAT_ID |\
	 PECS_FORMAT_LOST)

static void burn(void)
{
	struct timespec t0, t;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 50000000L);
}

/* Opens a TASK_CLOCK event sampling every field of LIVE_TYPES on this thread, burns CPU
 * and copies the first PERF_RECORD_SAMPLE into rec. Skips the test when the kernel
 * refuses the event. */
static void capture_live_sample(struct pecs_attr *a, uint64_t *id, uint8_t *rec,
				struct pecs_record_header *h)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = 9 * (size_t)page, off;
	const struct pecs_mmap_page *pg;
	uint8_t *base, *data;
	uint64_t head;
	int fd, found = 0;

	memset(a, 0, sizeof(*a));
	a->type = PECS_TYPE_SOFTWARE;
	a->size = PECS_ATTR_SIZE_VER8;
	a->config = PECS_SW_TASK_CLOCK;
	a->sample_period = 100000;
	a->sample_type = LIVE_TYPES;
	a->read_format = LIVE_FORMAT;
	a->flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	fd = (int)syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		/* PHYS_ADDR needs CAP_PERFMON, which a sandbox may have dropped. */
		a->sample_type &= ~PECS_SAMPLE_PHYS_ADDR;
		fd = (int)syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
	}
	if (fd < 0) {
		print_message("perf_event_open: %s\n", strerror(errno));
		skip();
	}
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(base != MAP_FAILED);
	assert_int_equal(ioctl(fd, PECS_IOC_ID, id), 0);
	ioctl(fd, PECS_IOC_ENABLE, 0);
	burn();
	ioctl(fd, PECS_IOC_DISABLE, 0);
	pg = (const struct pecs_mmap_page *)base;
	data = base + pg->data_offset;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	for (off = 0; off + 8 <= head && off < pg->data_size; off += h->size) {
		memcpy(h, data + off, sizeof(*h));
		if (h->size < 8)
			break;
		if (h->type == PECS_RECORD_SAMPLE && off + h->size <= pg->data_size) {
			memcpy(rec, data + off, h->size);
			found = 1;
			break;
		}
	}
	munmap(base, len);
	close(fd);
	assert_true(found);
}

static void test_live_kernel_record(void **state)
{
	struct pecs_attr a;
	uint64_t id = 0, w[1024], nr, ip;
	struct pecs_record_header h = { 0 };
	uint8_t rec[8192], mine[8192];
	size_t k = 1;
	struct ref_read_member m;
	struct ref_read_values rv = { 0, 0, 1, &m };
	struct pecs_sample s = { .size = sizeof(s) };
	struct ref_record_desc d;

	(void)state;
	capture_live_sample(&a, &id, rec, &h);
	d = base_desc(a.sample_type);
	/* Parse with the measured order; the checks on known values keep the parse honest. */
	memcpy(w, rec, h.size);
	assert_int_equal(w[k++], id); /* IDENTIFIER */
	ip = w[k++];
	s.pid = (uint32_t)w[k];
	s.tid = (uint32_t)(w[k++] >> 32);
	assert_int_equal(s.pid, getpid());
	assert_int_equal(s.tid, gettid());
	s.time = w[k++];
	s.addr = w[k++];
	assert_int_equal(w[k++], id); /* ID */
	assert_int_equal(w[k++], id); /* STREAM_ID: not inherited */
	s.cpu = (uint32_t)w[k];
	assert_int_equal(w[k++] >> 32, 0);
	s.period = w[k++];
	assert_int_equal(s.period, 100000);
	m.value = w[k++];
	rv.time_enabled = w[k++];
	rv.time_running = w[k++];
	m.id = w[k++];
	assert_int_equal(m.id, id);
	m.lost = w[k++];
	nr = w[k++];
	assert_true(nr >= 2);
	assert_int_equal(w[k++], PECS_CONTEXT_USER);
	s.ips = &w[k];
	s.nr_ips = (uint32_t)(nr - 1);
	assert_int_equal(s.ips[0], ip);
	k += nr - 1;
	assert_int_equal(w[k++], pair(4, 0));     /* RAW with no raw data */
	assert_int_equal(w[k++], 0);              /* WEIGHT */
	assert_int_equal(w[k++], PECS_DATA_SRC_NA);
	assert_int_equal(w[k++], 0);              /* TRANSACTION */
	if (a.sample_type & PECS_SAMPLE_PHYS_ADDR)
		assert_int_equal(w[k++], 0);      /* PHYS_ADDR of addr 0 */
	d.cgroup = w[k++];
	assert_int_equal(w[k++], 0);              /* DATA_PAGE_SIZE of addr 0 */
	d.code_page_size = w[k++];
	assert_int_equal(k * 8, h.size);

	d.id = d.stream_id = id;
	d.read_format = LIVE_FORMAT;
	s.misc = h.misc;
	assert_int_equal(ref_record_encode_sample(&d, &s, &rv, mine, sizeof(mine)), h.size);
	assert_memory_equal(mine, rec, h.size);
}

/* A RAW payload goes out as its u32 size and the bytes, between CALLCHAIN and
 * BRANCH_STACK; a size that would leave the record unaligned, or a size without bytes,
 * is refused before anything is written. */
static void test_raw_payload(void **state)
{
	(void)state;
	struct ref_record_desc d = base_desc(PECS_SAMPLE_TID | PECS_SAMPLE_RAW |
					     PECS_SAMPLE_BRANCH_STACK);
	struct pecs_sample s = base_sample();
	uint8_t raw[28], out[128] __attribute__((aligned(8)));
	uint32_t size;

	for (size_t i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(i + 1);
	s.raw = raw;
	s.raw_size = sizeof(raw);
	assert_int_equal(ref_record_sample_size(&d, &s, NULL), 8 + 8 + 4 + 28 + 8);
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 56);
	memcpy(&size, out + 16, 4);
	assert_int_equal(size, 28);
	assert_memory_equal(out + 20, raw, 28);
	assert_int_equal(out[48], 0); /* BRANCH_STACK nr 0 follows */
	s.raw_size = 24;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), -EINVAL);
	s.raw_size = 28;
	s.raw = NULL;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_field_alone),
		cmocka_unit_test(test_read_field),
		cmocka_unit_test(test_field_order),
		cmocka_unit_test(test_misc_and_markers),
		cmocka_unit_test(test_callchain_excluded),
		cmocka_unit_test(test_callchain_max_stack),
		cmocka_unit_test(test_u16_never_overflows),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_lost_and_trailer),
		cmocka_unit_test(test_live_kernel_record),
		cmocka_unit_test(test_raw_payload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
