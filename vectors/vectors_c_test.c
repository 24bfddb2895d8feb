/* Checks the generated C arrays against the JSON's shape and against pecs/abi.h.
 *
 * The vectors come from Python field tables; abi.h was written separately from the
 * UAPI header. Where both describe the same layout they must agree, which is the
 * "derived twice" rule of docs/vectors.md. Record bytes are re-walked here in C, in
 * perf_output_sample() order, without looking at the Python encoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pecs/abi.h"
#include "pecs/vectors.h"

static uint32_t popcount64(uint64_t x)
{
	return (uint32_t)__builtin_popcountll(x);
}

/* The man page's arithmetic: 8 bytes per word returned by read(). */
static uint32_t read_size(uint64_t rf, uint32_t nr)
{
	uint32_t times = popcount64(rf & (PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING));
	uint32_t per_event = 1 + popcount64(rf & (PECS_FORMAT_ID | PECS_FORMAT_LOST));

	if (rf & PECS_FORMAT_GROUP)
		return 8 * (1 + times) + 8 * nr * per_event;
	return 8 * (times + per_event);
}

static void test_read_formats(void **state)
{
	unsigned seen_single[16] = { 0 }, seen_group[4][16] = { { 0 } };
	(void)state;

	assert_int_equal(pecs_vec_read_formats_count, 16 + 3 * 16);
	for (size_t i = 0; i < pecs_vec_read_formats_count; i++) {
		const struct pecs_vec_read_format *v = &pecs_vec_read_formats[i];
		uint64_t optional = v->read_format & ~PECS_FORMAT_GROUP;
		uint32_t end = 0;

		assert_true(v->read_format < PECS_FORMAT_MAX);
		assert_int_equal(v->size, read_size(v->read_format, v->nr_members));
		assert_int_equal(v->nr_fields * 8, v->size);
		for (uint32_t f = 0; f < v->nr_fields; f++) {
			assert_int_equal(v->fields[f].offset, end);
			assert_int_equal(v->fields[f].size, 8);
			end += v->fields[f].size;
		}
		/* optional bits are 0,1,2,4: squeeze them into an index 0..15 */
		unsigned idx = (unsigned)((optional & 7) | ((optional & PECS_FORMAT_LOST) >> 1));
		if (v->read_format & PECS_FORMAT_GROUP) {
			assert_in_range(v->nr_members, 1, 3);
			assert_string_equal(v->fields[0].name, "nr");
			seen_group[v->nr_members][idx]++;
		} else {
			assert_int_equal(v->nr_members, 1);
			assert_string_equal(v->fields[0].name, "value");
			seen_single[idx]++;
		}
	}
	for (unsigned i = 0; i < 16; i++) {
		assert_int_equal(seen_single[i], 1);
		for (unsigned nr = 1; nr <= 3; nr++)
			assert_int_equal(seen_group[nr][i], 1);
	}
}

#define MMAP_FIELD(f) { #f, offsetof(struct pecs_mmap_page, f), sizeof(((struct pecs_mmap_page *)0)->f) }

static const struct {
	const char *name;
	size_t offset, size;
} mmap_fields[] = {
	MMAP_FIELD(version), MMAP_FIELD(compat_version), MMAP_FIELD(lock), MMAP_FIELD(index),
	MMAP_FIELD(offset), MMAP_FIELD(time_enabled), MMAP_FIELD(time_running),
	MMAP_FIELD(capabilities), MMAP_FIELD(pmc_width), MMAP_FIELD(time_shift),
	MMAP_FIELD(time_mult), MMAP_FIELD(time_offset), MMAP_FIELD(time_zero), MMAP_FIELD(size),
	{ "__reserved_1", offsetof(struct pecs_mmap_page, reserved_1), 4 },
	MMAP_FIELD(time_cycles), MMAP_FIELD(time_mask),
	{ "__reserved", offsetof(struct pecs_mmap_page, reserved), sizeof(((struct pecs_mmap_page *)0)->reserved) },
	MMAP_FIELD(data_head), MMAP_FIELD(data_tail), MMAP_FIELD(data_offset), MMAP_FIELD(data_size),
	MMAP_FIELD(aux_head), MMAP_FIELD(aux_tail), MMAP_FIELD(aux_offset), MMAP_FIELD(aux_size),
};

static void test_mmap_page(void **state)
{
	const size_t n = sizeof(mmap_fields) / sizeof(mmap_fields[0]);
	int data_head_seen = 0;
	(void)state;

	assert_int_equal(pecs_vec_mmap_page_count, n);
	for (size_t i = 0; i < pecs_vec_mmap_page_count; i++) {
		const struct pecs_vec_layout *v = &pecs_vec_mmap_page[i];

		/* same order as the header, and the same place as abi.h's struct */
		assert_string_equal(v->name, mmap_fields[i].name);
		assert_int_equal(v->offset, mmap_fields[i].offset);
		assert_int_equal(v->size, mmap_fields[i].size);
		if (!strcmp(v->name, "data_head")) {
			assert_int_equal(v->offset, 1024);
			data_head_seen = 1;
		}
	}
	assert_true(data_head_seen);
	assert_int_equal(pecs_vec_mmap_page[n - 1].offset + pecs_vec_mmap_page[n - 1].size,
			 sizeof(struct pecs_mmap_page));
}

static void test_mmap_caps(void **state)
{
	static const uint64_t caps[] = { PECS_CAP_BIT0, PECS_CAP_BIT0_IS_DEPRECATED, PECS_CAP_USER_RDPMC,
					 PECS_CAP_USER_TIME, PECS_CAP_USER_TIME_ZERO, PECS_CAP_USER_TIME_SHORT };
	(void)state;

	assert_int_equal(pecs_vec_mmap_caps_count, 6);
	for (size_t i = 0; i < pecs_vec_mmap_caps_count; i++)
		assert_int_equal(1ull << pecs_vec_mmap_caps[i].bit, caps[i]);
	assert_string_equal(pecs_vec_mmap_caps[3].name, "cap_user_time");
}

static void test_attr_sizes(void **state)
{
	static const uint32_t sizes[] = { PECS_ATTR_SIZE_VER0, PECS_ATTR_SIZE_VER1, PECS_ATTR_SIZE_VER2,
					  PECS_ATTR_SIZE_VER3, PECS_ATTR_SIZE_VER4, PECS_ATTR_SIZE_VER5,
					  PECS_ATTR_SIZE_VER6, PECS_ATTR_SIZE_VER7, PECS_ATTR_SIZE_VER8 };
	(void)state;

	assert_int_equal(pecs_vec_attr_sizes_count, 9);
	for (size_t i = 0; i < pecs_vec_attr_sizes_count; i++) {
		char name[48]; /* room for any size_t, which -Wformat-truncation checks under -O */

		snprintf(name, sizeof(name), "PERF_ATTR_SIZE_VER%zu", i);
		assert_string_equal(pecs_vec_attr_sizes[i].name, name);
		assert_int_equal(pecs_vec_attr_sizes[i].size, sizes[i]);
	}
	assert_int_equal(pecs_vec_attr_sizes[8].size, sizeof(struct pecs_attr));
	assert_int_equal(pecs_vec_attr_sizes[1].size, offsetof(struct pecs_attr, branch_sample_type));
}

static void test_ioctls(void **state)
{
	static const struct {
		const char *name;
		unsigned long request;
	} want[] = {
		{ "PERF_EVENT_IOC_ENABLE", PECS_IOC_ENABLE }, { "PERF_EVENT_IOC_DISABLE", PECS_IOC_DISABLE },
		{ "PERF_EVENT_IOC_REFRESH", PECS_IOC_REFRESH }, { "PERF_EVENT_IOC_RESET", PECS_IOC_RESET },
		{ "PERF_EVENT_IOC_PERIOD", PECS_IOC_PERIOD }, { "PERF_EVENT_IOC_SET_OUTPUT", PECS_IOC_SET_OUTPUT },
		{ "PERF_EVENT_IOC_SET_FILTER", PECS_IOC_SET_FILTER }, { "PERF_EVENT_IOC_ID", PECS_IOC_ID },
		{ "PERF_EVENT_IOC_SET_BPF", PECS_IOC_SET_BPF },
		{ "PERF_EVENT_IOC_PAUSE_OUTPUT", PECS_IOC_PAUSE_OUTPUT },
		{ "PERF_EVENT_IOC_QUERY_BPF", PECS_IOC_QUERY_BPF },
		{ "PERF_EVENT_IOC_MODIFY_ATTRIBUTES", PECS_IOC_MODIFY_ATTRIBUTES },
	};
	(void)state;

	assert_int_equal(pecs_vec_ioctls_count, 12);
	for (size_t i = 0; i < pecs_vec_ioctls_count; i++) {
		assert_string_equal(pecs_vec_ioctls[i].name, want[i].name);
		assert_int_equal(pecs_vec_ioctls[i].request, want[i].request);
		assert_int_equal((pecs_vec_ioctls[i].request >> 8) & 0xff, '$');
	}
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The dynamic range covering [off, off+8), or NULL. */
static const char *dynamic_at(const struct pecs_vec_record *v, uint32_t off)
{
	for (uint32_t i = 0; i < v->nr_dynamic; i++)
		if (v->dynamic[i].offset == off && v->dynamic[i].size == 8)
			return v->dynamic[i].field;
	return NULL;
}

struct walk {
	const struct pecs_vec_record *v;
	uint32_t off;
	uint32_t nr_dynamic;
};

/* A u64 the checker must find verbatim. */
static void expect_word(struct walk *w, uint64_t value)
{
	assert_true(w->off + 8 <= w->v->expected_len);
	assert_null(dynamic_at(w->v, w->off));
	assert_int_equal(get_u64(w->v->expected + w->off), value);
	w->off += 8;
}

/* A u64 only known at run time: must be listed in dynamic under this name. */
static void expect_dynamic(struct walk *w, const char *field)
{
	const char *have = dynamic_at(w->v, w->off);

	assert_non_null(have);
	assert_string_equal(have, field);
	w->off += 8;
	w->nr_dynamic++;
}

static void walk_read(struct walk *w)
{
	uint64_t rf = w->v->read_format;
	char name[32];

	if (rf & PECS_FORMAT_GROUP)
		expect_word(w, w->v->nr_members);
	else
		expect_dynamic(w, "value");
	if (rf & PECS_FORMAT_TOTAL_TIME_ENABLED)
		expect_dynamic(w, "time_enabled");
	if (rf & PECS_FORMAT_TOTAL_TIME_RUNNING)
		expect_dynamic(w, "time_running");
	if (!(rf & PECS_FORMAT_GROUP)) {
		if (rf & PECS_FORMAT_ID)
			expect_dynamic(w, "id");
		if (rf & PECS_FORMAT_LOST)
			expect_word(w, 0);
		return;
	}
	for (uint32_t i = 0; i < w->v->nr_members; i++) {
		snprintf(name, sizeof(name), "member_value[%u]", i);
		expect_dynamic(w, name);
		if (rf & PECS_FORMAT_ID) {
			snprintf(name, sizeof(name), "member_id[%u]", i);
			expect_dynamic(w, name);
		}
		if (rf & PECS_FORMAT_LOST)
			expect_word(w, 0);
	}
}

static void test_records(void **state)
{
	(void)state;

	assert_true(pecs_vec_records_count >= 40);
	for (size_t i = 0; i < pecs_vec_records_count; i++) {
		const struct pecs_vec_record *v = &pecs_vec_records[i];
		const uint64_t st = v->sample_type;
		struct pecs_record_header h;
		struct walk w = { .v = v, .off = sizeof(h) };

		if (getenv("PECS_VERBOSE")) /* names the vector an assertion below stops on */
			print_message("tcId %d: %s\n", v->tc_id, v->comment);
		assert_true(v->expected_len >= sizeof(h));
		memcpy(&h, v->expected, sizeof(h));
		assert_int_equal(h.type, PECS_RECORD_SAMPLE);
		assert_int_equal(h.misc, PECS_MISC_USER);
		assert_int_equal(h.size, v->expected_len);
		assert_int_equal(h.size % 8, 0);
		assert_true(v->nr_ips >= 1);

		if (st & PECS_SAMPLE_IDENTIFIER)
			expect_dynamic(&w, "id");
		if (st & PECS_SAMPLE_IP)
			expect_word(&w, v->ips[0]);
		if (st & PECS_SAMPLE_TID)
			expect_word(&w, (uint64_t)v->tid << 32 | v->pid);
		if (st & PECS_SAMPLE_TIME)
			expect_word(&w, v->time);
		if (st & PECS_SAMPLE_ADDR)
			expect_word(&w, v->addr);
		if (st & PECS_SAMPLE_ID)
			expect_dynamic(&w, "id");
		if (st & PECS_SAMPLE_STREAM_ID)
			expect_dynamic(&w, "id");
		if (st & PECS_SAMPLE_CPU)
			expect_word(&w, v->cpu);
		if (st & PECS_SAMPLE_PERIOD)
			expect_word(&w, v->period);
		if (st & PECS_SAMPLE_READ)
			walk_read(&w);
		if (st & PECS_SAMPLE_CALLCHAIN) {
			expect_word(&w, 1 + (uint64_t)v->nr_ips);
			expect_word(&w, PECS_CONTEXT_USER);
			for (uint32_t k = 0; k < v->nr_ips; k++)
				expect_word(&w, v->ips[k]);
		}
		if (st & PECS_SAMPLE_RAW)
			expect_word(&w, 4); /* u32 size 4, then a zero u32 */
		if (st & PECS_SAMPLE_WEIGHT)
			expect_word(&w, 0);
		if (st & PECS_SAMPLE_WEIGHT_STRUCT)
			expect_word(&w, 0);
		if (st & PECS_SAMPLE_DATA_SRC)
			expect_word(&w, PECS_DATA_SRC_NA);
		if (st & PECS_SAMPLE_TRANSACTION)
			expect_word(&w, 0);
		if (st & PECS_SAMPLE_PHYS_ADDR) {
			assert_int_equal(v->addr, 0);
			expect_word(&w, 0);
		}
		if (st & PECS_SAMPLE_CGROUP)
			expect_dynamic(&w, "cgroup");
		if (st & PECS_SAMPLE_DATA_PAGE_SIZE) {
			assert_int_equal(v->addr, 0);
			expect_word(&w, 0);
		}
		if (st & PECS_SAMPLE_CODE_PAGE_SIZE)
			expect_dynamic(&w, "code_page_size");

		assert_int_equal(w.off, v->expected_len);
		assert_int_equal(w.nr_dynamic, v->nr_dynamic);
		if (st & PECS_SAMPLE_READ)
			assert_true(w.off >= sizeof(h) + read_size(v->read_format, v->nr_members));
	}
}

static void test_streams_well_formed(void **state)
{
	(void)state;

	for (size_t i = 0; i < pecs_vec_fxt_count + pecs_vec_markup_count; i++) {
		const struct pecs_vec_stream *v = i < pecs_vec_fxt_count ? &pecs_vec_fxt[i]
									: &pecs_vec_markup[i - pecs_vec_fxt_count];

		assert_true(v->tc_id > 0);
		assert_true(v->stream_len == 0 || v->stream != NULL);
		for (uint32_t d = 0; d < v->nr_dynamic; d++)
			assert_true(v->dynamic[d].offset + v->dynamic[d].size <= v->ring_len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_formats),
		cmocka_unit_test(test_mmap_page),
		cmocka_unit_test(test_mmap_caps),
		cmocka_unit_test(test_attr_sizes),
		cmocka_unit_test(test_ioctls),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_streams_well_formed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
