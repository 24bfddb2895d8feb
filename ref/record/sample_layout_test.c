/* The planned layout (sample_layout.c) against the encoder it stands in for: for every
 * sample_type the plan takes, over random descs and samples, the same bytes; and the
 * plan declines exactly READ, CODE_PAGE_SIZE and unknown bits. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ref/record/sample_layout.h"

#define DECLINED (PECS_SAMPLE_READ | PECS_SAMPLE_CODE_PAGE_SIZE)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct ref_record_desc random_desc(uint64_t st)
{
	static const uint32_t stacks[] = { 0, 1, 5, 127, 300 };
	struct ref_record_desc d = {
		.sample_type = st,
		.read_format = next() & (PECS_FORMAT_MAX - 1),
		.sample_id_all = (int)(next() & 1),
		.id = next(), .stream_id = next(),
		.max_stack = stacks[next() % 5],
		.period = next() & 1 ? next() : 0,
		.cgroup = next() & 1 ? next() : 0,
		.code_page_size = 4096,
	};

	return d;
}

static void check_samples(const struct ref_record_desc *d, const struct ref_record_layout *l)
{
	static uint64_t ips[400];
	static uint8_t a[8192], b[8192];

	for (size_t i = 0; i < 400; i++)
		ips[i] = next();
	for (int k = 0; k < 40; k++) {
		struct pecs_sample s = {
			.size = sizeof(s), .pid = (uint32_t)next(), .tid = (uint32_t)next(),
			.time = next(), .cpu = (uint32_t)next() % 8,
			.misc = next() & 1 ? PECS_MISC_USER : 0,
			.period = next() & 1 ? next() : 0, .addr = next(),
			.nr_ips = (uint32_t)(next() % 330), .ips = ips,
		};
		uint32_t keep;
		size_t size;
		ssize_t n;

		if (k == 0)
			s.nr_ips = 0;
		if (k == 1)
			s.ips = NULL, s.nr_ips = 0;
		assert_true(ref_record_layout_fits(&s));
		memset(a, 0xa5, sizeof(a));
		memset(b, 0x5a, sizeof(b));
		n = ref_record_encode_sample(d, &s, NULL, a, sizeof(a));
		assert_true(n > 0);
		keep = ref_record_layout_keep(l, &s);
		size = ref_record_layout_size(l, keep);
		assert_int_equal(size, (size_t)n);
		assert_int_equal(keep, ref_record_callchain_room(d, &s, NULL));
		ref_record_layout_encode(l, &s, keep, size, b);
		assert_memory_equal(a, b, size);
		/* Not a byte past the record (the head's fixed-size copy included). */
		for (size_t i = size; i < size + 72; i++)
			assert_int_equal(b[i], 0x5a);
	}
}

static void layout_matches_encoder(void **state)
{
	int planned = 0, declined = 0;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		uint64_t st = next() & (PECS_SAMPLE_MAX - 1);
		struct ref_record_desc d;
		struct ref_record_layout l;
		int ret;

		/* Half the draws without the declined bits, so most plans are taken. */
		if (i & 1)
			st &= ~DECLINED;
		d = random_desc(st);
		ret = ref_record_layout_plan(&d, &l);
		if (st & DECLINED) {
			assert_int_equal(ret, -EOPNOTSUPP);
			declined++;
			continue;
		}
		assert_int_equal(ret, 0);
		planned++;
		check_samples(&d, &l);
	}
	assert_true(planned > 9000 && declined > 4000);
}

static void layout_refuses_bad_desc(void **state)
{
	struct ref_record_desc d = { .sample_type = PECS_SAMPLE_MAX };
	struct ref_record_layout l;

	(void)state;
	assert_int_equal(ref_record_layout_plan(&d, &l), -EINVAL);
	d.sample_type = PECS_SAMPLE_IP;
	d.read_format = PECS_FORMAT_MAX;
	assert_int_equal(ref_record_layout_plan(&d, &l), -EINVAL);
}

/* A sample the layout does not take: a kernel cpumode, ips missing, a RAW payload, an
 * older version. */
static void layout_fits_user_samples_only(void **state)
{
	static const uint32_t raw = 0;
	struct pecs_sample s = { .size = sizeof(s), .misc = PECS_MISC_KERNEL };

	(void)state;
	assert_false(ref_record_layout_fits(&s));
	s.misc = PECS_MISC_USER;
	s.nr_ips = 1;
	assert_false(ref_record_layout_fits(&s));
	s.nr_ips = 0;
	assert_true(ref_record_layout_fits(&s));
	s.raw = &raw;
	s.raw_size = sizeof(raw);
	assert_false(ref_record_layout_fits(&s));
	s.raw = NULL;
	s.raw_size = 0;
	s.size = offsetof(struct pecs_sample, ips);
	assert_false(ref_record_layout_fits(&s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layout_matches_encoder),
		cmocka_unit_test(layout_refuses_bad_desc),
		cmocka_unit_test(layout_fits_user_samples_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
