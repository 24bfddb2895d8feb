/* REGS_USER, STACK_USER and REGS_INTR from the encoder, spelled out by hand after
 * perf_output_sample_regs(), perf_sample_ustack_size() and perf_output_sample_ustack()
 * in kernel/events/core.c (6.12). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ref/record/record.h"

#define ST (PECS_SAMPLE_TID | PECS_SAMPLE_REGS_USER | PECS_SAMPLE_STACK_USER | \
	    PECS_SAMPLE_REGS_INTR)
/* BX, SP, IP, R15: bits 1, 7, 8, 23. */
#define MASK ((1ull << 1) | (1ull << 7) | (1ull << 8) | (1ull << 23))

static uint64_t regs[24];
static uint8_t stack[40];

static struct pecs_sample with_regs(void)
{
	struct pecs_sample s = { .size = sizeof(s), .pid = 1, .tid = 2 };

	for (unsigned i = 0; i < 24; i++)
		regs[i] = 0x1000 + i;
	regs[7] = 0x7ffd00001000ull; /* SP */
	for (unsigned i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(0xa0 + i);
	s.regs_abi = PECS_SAMPLE_REGS_ABI_64;
	s.nr_regs = 24;
	s.regs = regs;
	s.stack = stack;
	s.stack_size = sizeof(stack);
	return s;
}

static uint64_t word(const uint8_t *p, size_t i)
{
	uint64_t v;

	memcpy(&v, p + 8 * i, 8);
	return v;
}

/* abi, the mask's registers lowest bit first, the dump size, the bytes (zeros past what
 * was copied), dyn_size, then REGS_INTR the same as REGS_USER for a user-mode sample. */
static void test_layout(void **state)
{
	struct ref_record_desc d = { .sample_type = ST, .regs_user = MASK, .regs_intr = MASK,
				     .stack_user = 64 };
	struct pecs_sample s = with_regs();
	uint8_t out[512] __attribute__((aligned(8)));
	size_t want = 8 + 8 + (8 + 32) + (8 + 64 + 8) + (8 + 32);

	(void)state;
	assert_int_equal(ref_record_sample_size(&d, &s, NULL), want);
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), want);
	assert_int_equal(word(out, 2), PECS_SAMPLE_REGS_ABI_64);
	assert_int_equal(word(out, 3), 0x1001);
	assert_int_equal(word(out, 4), 0x7ffd00001000ull);
	assert_int_equal(word(out, 5), 0x1008);
	assert_int_equal(word(out, 6), 0x1017);
	assert_int_equal(word(out, 7), 64);
	assert_memory_equal(out + 64, stack, sizeof(stack));
	for (size_t i = sizeof(stack); i < 64; i++)
		assert_int_equal(out[64 + i], 0);
	assert_int_equal(word(out, 16), sizeof(stack));
	assert_memory_equal(out + 136, out + 16, 40);
}

/* Without captured registers: abi 0 alone, and a dump of size 0 with no dyn_size. A
 * kernel-mode sample has no REGS_INTR to give (its user registers are not those). */
static void test_no_regs(void **state)
{
	struct ref_record_desc d = { .sample_type = ST, .regs_user = MASK, .regs_intr = MASK,
				     .stack_user = 64 };
	struct pecs_sample s = { .size = sizeof(s) };
	uint8_t out[512] __attribute__((aligned(8)));

	(void)state;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 40);
	assert_int_equal(word(out, 2), 0);
	assert_int_equal(word(out, 3), 0);
	assert_int_equal(word(out, 4), 0);
	s = with_regs();
	s.misc = PECS_MISC_KERNEL;
	d.sample_type = PECS_SAMPLE_TID | PECS_SAMPLE_REGS_INTR;
	assert_int_equal(ref_record_encode_sample(&d, &s, NULL, out, sizeof(out)), 24);
	assert_int_equal(word(out, 2), 0);
}

/* perf_sample_ustack_size(): at most TASK_SIZE - SP, and at most what fits the u16. */
static void test_dump_size_limits(void **state)
{
	struct ref_record_desc d = { .sample_type = PECS_SAMPLE_TID | PECS_SAMPLE_STACK_USER,
				     .stack_user = 4096 };
	struct pecs_sample s = with_regs();

	(void)state;
	regs[7] = 0x7ffffffff000ull - 24;
	assert_int_equal(ref_record_sample_size(&d, &s, NULL), 8 + 8 + 8 + 24 + 8);
	regs[7] = 0x7ffd00001000ull;
	d.stack_user = 65528;
	assert_int_equal(ref_record_sample_size(&d, &s, NULL), 65528);
	/* A capture that lists regs without an array is refused. */
	s.regs = NULL;
	assert_int_equal(ref_record_sample_size(&d, &s, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_no_regs),
		cmocka_unit_test(test_dump_size_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
