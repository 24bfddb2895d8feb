/* read() of a single event: all 16 read_format layouts, byte for byte.
 *
 * The vector says where each field sits; the case makes each field's position observable:
 * after a run the value and both times are non-zero, the id is IOC_ID's and lost is 0
 * (a counting event drops nothing); then RESET changes the value alone, which tells the
 * value apart from the times even though a task clock's value and times are about equal.
 */
#include <string.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/coverage.h"

#define BEHAVIOURS_SINGLE "READ-LAYOUT-SINGLE,READ-SIZE-EXACT,READ-ID-IS-IOC-ID,READ-TIMES-ORDER,READ-RESET-COUNT-ONLY"

/* Field offset in v, or -1 when the layout has no such field. */
#define OFF(v, name) pecs_cnt_vec_offset((v), (name))

static void check_single(struct pecs_t *t, uint64_t rf)
{
	const struct pecs_vec_read_format *v = pecs_cnt_vec(rf, 1);
	uint64_t before[16], after[16], id;
	struct pecs_attr attr;
	char why[160];
	long off;
	int fd;

	if (!v)
		PECS_BROKEN(t, "no read_format vector for 0x%llx", (unsigned long long)rf);
	if (pecs_cnt_vec_agrees(v, why, sizeof(why)) < 0)
		PECS_BROKEN(t, "vector disagrees with perf_event_open(2): %s", why);

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, rf);
	fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, pecs_cnt_run(t, fd, 0, 2000000));

	/* a larger buffer: exactly the layout's size comes back and nothing past it moves */
	memset(before, 0xa5, sizeof(before));
	PECS_CHECK_EQ(t, pecs_read(t, fd, before, sizeof(before)), v->size);
	for (size_t i = v->size / 8; i < 16; i++)
		PECS_CHECK(t, before[i] == 0xa5a5a5a5a5a5a5a5ull,
			   "tcId %d: read wrote past its %u bytes (u64 %zu)", v->tc_id, v->size, i);

	PECS_CHECK(t, pecs_cnt_u64(before, OFF(v, "value")) > 0,
		   "tcId %d: value is 0 after 2 ms of TASK_CLOCK", v->tc_id);
	if ((off = OFF(v, "time_enabled")) >= 0)
		PECS_CHECK(t, pecs_cnt_u64(before, off) > 0, "tcId %d: time_enabled is 0",
			   v->tc_id);
	if ((off = OFF(v, "time_running")) >= 0) {
		PECS_CHECK(t, pecs_cnt_u64(before, off) > 0, "tcId %d: time_running is 0",
			   v->tc_id);
		if (OFF(v, "time_enabled") >= 0)
			PECS_CHECK(t, pecs_cnt_u64(before, off) <=
					      pecs_cnt_u64(before, OFF(v, "time_enabled")),
				   "tcId %d: time_running > time_enabled", v->tc_id);
	}
	if ((off = OFF(v, "id")) >= 0)
		PECS_CHECK(t, pecs_cnt_u64(before, off) == id,
			   "tcId %d: id field %llu, IOC_ID gave %llu", v->tc_id,
			   (unsigned long long)pecs_cnt_u64(before, off), (unsigned long long)id);
	if ((off = OFF(v, "lost")) >= 0)
		PECS_CHECK(t, pecs_cnt_u64(before, off) == 0, "tcId %d: lost %llu on a counting event",
			   v->tc_id, (unsigned long long)pecs_cnt_u64(before, off));

	/* RESET: the value field, and only it, drops to 0 */
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_RESET, 0));
	memcpy(after, before, sizeof(after));
	PECS_CHECK_EQ(t, pecs_read(t, fd, after, v->size), v->size);
	for (uint32_t i = 0; i < v->nr_fields; i++) {
		const struct pecs_vec_field *f = &v->fields[i];
		uint64_t was = pecs_cnt_u64(before, f->offset), now = pecs_cnt_u64(after, f->offset);

		if (!strcmp(f->name, "value"))
			PECS_CHECK(t, now == 0, "tcId %d: value %llu after RESET of a stopped event",
				   v->tc_id, (unsigned long long)now);
		else
			PECS_CHECK(t, now == was, "tcId %d: %s changed by RESET: %llu -> %llu",
				   v->tc_id, f->name, (unsigned long long)was,
				   (unsigned long long)now);
	}
}

struct single_row {
	struct pecs_row head;
	uint64_t rf;
};

#define TE PECS_FORMAT_TOTAL_TIME_ENABLED
#define TR PECS_FORMAT_TOTAL_TIME_RUNNING
#define ID PECS_FORMAT_ID
#define LOST PECS_FORMAT_LOST
#define ROW(name, rf, features) \
	{{"Required.Read.Layout.Single." name, features, BEHAVIOURS_SINGLE}, rf}

/* Every combination of the read_format bits below PECS_FORMAT_MAX, GROUP aside. */
static const struct single_row single_rows[] = {
	ROW("Value", 0, "counting"),
	ROW("Te", TE, "counting"),
	ROW("Tr", TR, "counting"),
	ROW("TeTr", TE | TR, "counting"),
	ROW("Id", ID, "counting"),
	ROW("TeId", TE | ID, "counting"),
	ROW("TrId", TR | ID, "counting"),
	ROW("TeTrId", TE | TR | ID, "counting"),
	ROW("Lost", LOST, "counting,read.lost"),
	ROW("TeLost", TE | LOST, "counting,read.lost"),
	ROW("TrLost", TR | LOST, "counting,read.lost"),
	ROW("TeTrLost", TE | TR | LOST, "counting,read.lost"),
	ROW("IdLost", ID | LOST, "counting,read.lost"),
	ROW("TeIdLost", TE | ID | LOST, "counting,read.lost"),
	ROW("TrIdLost", TR | ID | LOST, "counting,read.lost"),
	ROW("TeTrIdLost", TE | TR | ID | LOST, "counting,read.lost"),
};

static void single_case(struct pecs_t *t, const struct single_row *r)
{
	PECS_FORMAT_TABLE_COVERS(t, single_rows, PECS_FORMAT_GROUP);
	check_single(t, r->rf);
}

PECS_CASE_TABLE(single_rows, single_case);
