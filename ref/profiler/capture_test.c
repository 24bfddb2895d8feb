/* The live sampler's register and stack capture (capture.c), end to end through its FXT
 * stream: with user_regs each sample carries abi 64, perf's 24 x86-64 registers (IP the
 * sampled IP, CS and SS a 64-bit user task's, SP on this thread's stack below the burning
 * frame) and at most user_stack bytes copied from that SP; without, none. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pecs/profiler/profiler.h"
#include "pecs/profiler/sampler.h"
#include "pecs/stream/decoder.h"
#include "sampler_test_support.h"

#define STACK_ASK 512u

static struct {
	int samples, with_regs, bad;
	uint64_t frame; /* an address in the frame that burns: SP lies below it */
	char why[160];
} seen;

static int regs_sink(void *ctx, const struct pecs_sample *s)
{
	const uint64_t *r = s->regs;

	(void)ctx;
	seen.samples++;
	if (!s->regs_abi)
		return 0;
	seen.with_regs++;
	if (seen.bad)
		return 0;
	if (s->regs_abi != PECS_SAMPLE_REGS_ABI_64 || s->nr_regs != 24)
		seen.bad = snprintf(seen.why, sizeof(seen.why), "abi %u, %u regs", s->regs_abi,
				    s->nr_regs);
	else if (!s->nr_ips || r[8] != s->ips[0])
		seen.bad = snprintf(seen.why, sizeof(seen.why), "IP %#llx, ips[0] %#llx",
				    (unsigned long long)r[8],
				    (unsigned long long)(s->nr_ips ? s->ips[0] : 0));
	else if (r[10] != 0x33 || r[11] != 0x2b)
		seen.bad = snprintf(seen.why, sizeof(seen.why), "CS %#llx SS %#llx",
				    (unsigned long long)r[10], (unsigned long long)r[11]);
	else if (r[7] >= seen.frame || seen.frame - r[7] > 1u << 20)
		seen.bad = snprintf(seen.why, sizeof(seen.why), "SP %#llx, the frame at %#llx",
				    (unsigned long long)r[7], (unsigned long long)seen.frame);
	else if (!s->stack_size || s->stack_size > STACK_ASK || !s->stack)
		seen.bad = snprintf(seen.why, sizeof(seen.why), "%u stack bytes of %u",
				    s->stack_size, STACK_ASK);
	return 0;
}

/* Runs the sampler on this thread over 60 ms of CPU and decodes its whole stream. */
static void run(int user_regs)
{
	struct ref_profiler *p;
	struct ref_profiler_sampling sm = { .period = 1000000, .timebase = REF_PROFILER_NANOSECONDS,
					    .callgraph = REF_PROFILER_CALLGRAPH_FRAME_POINTER,
					    .user_regs = user_regs, .user_stack = STACK_ASK };
	struct ref_profiler_target tg = { .kind = REF_PROFILER_TASK_THREAD, .koid = (uint64_t)gettid() };
	struct ref_profiler_config cfg = { .samplings = &sm, .nr_samplings = 1,
					   .targets = &tg, .nr_targets = 1 };
	struct ref_profiler_result res = { 0 };
	struct ref_stream_target t = { .sink = regs_sink };
	struct ref_stream_decoder *d;
	uint8_t b[4096];
	ssize_t n;

	memset(&seen, 0, sizeof(seen));
	/* The frame itself, not a local's address: ASan may keep locals on its fake stack. */
	seen.frame = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	assert_int_equal(ref_profiler_new_sampler(&p, NULL), 0);
	assert_int_equal(ref_profiler_configure(p, &cfg), 0);
	assert_int_equal(ref_profiler_start(p, NULL), 0);
	pecs_sampler_test_spin(60000000ull);
	assert_int_equal(ref_profiler_stop(p, &res), 0);
	assert_int_equal(ref_stream_decoder_new(&d, PECS_STREAM_FXT, &t), 0);
	while ((n = ref_profiler_read(p, b, sizeof(b))) > 0)
		assert_int_equal(ref_stream_decoder_feed(d, b, (size_t)n), 0);
	assert_int_equal(ref_stream_decoder_finish(d), 0);
	ref_stream_decoder_free(d);
	ref_profiler_free(p);
	assert_true(seen.samples > 0);
	assert_true((uint64_t)seen.samples == res.samples_collected);
}

static void test_samples_carry_registers(void **state)
{
	(void)state;
	run(1);
	assert_int_equal(seen.with_regs, seen.samples);
	if (seen.bad)
		fail_msg("a sample's capture: %s", seen.why);
}

static void test_without_asking_none(void **state)
{
	(void)state;
	run(0);
	assert_int_equal(seen.with_regs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_carry_registers),
		cmocka_unit_test(test_without_asking_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
