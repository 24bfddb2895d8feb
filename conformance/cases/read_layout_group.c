/* read() with PERF_FORMAT_GROUP: all 16 layouts, for groups of 1, 2 and 3 events.
 *
 * Each member's entry is found by its id (IOC_ID of that fd, in creation order) and by
 * RESET of that member alone, which must zero that member's value and nothing else. The
 * same bytes must come back through every member's fd, since a group read always
 * describes the whole group, leader first.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/coverage.h"

#define BEHAVIOURS_GROUP                                                                \
	"READ-LAYOUT-GROUP,READ-SIZE-EXACT,READ-GROUP-LEADER-FIRST,READ-GROUP-ANY-FD," \
	"READ-ID-IS-IOC-ID,READ-TIMES-ORDER,READ-RESET-COUNT-ONLY"

#define BUF_U64 64 /* 512 bytes: more than the largest layout checked here (3 x 24 + 24) */

/* Offset of member m's field name in v, or -1. */
static long member_off(const struct pecs_vec_read_format *v, uint32_t m, const char *name)
{
	char field[48];

	snprintf(field, sizeof(field), "member[%u].%s", m, name);
	return pecs_cnt_vec_offset(v, field);
}

/* The first read: the layout's size exactly, nothing past it, nr, times, and each
 * member's value, id and lost where the layout has them. */
static void check_first_read(struct pecs_t *t, const struct pecs_vec_read_format *v,
			     uint32_t nr, int leader, const uint64_t *ids, uint64_t *before)
{
	long off, te, tr;

	memset(before, 0xa5, BUF_U64 * 8);
	PECS_CHECK_EQ(t, pecs_read(t, leader, before, BUF_U64 * 8), v->size,
		      "tcId %d: read of a %u-member group", v->tc_id, nr);
	for (uint32_t i = v->size / 8; i < BUF_U64; i++)
		PECS_CHECK(t, before[i] == 0xa5a5a5a5a5a5a5a5ull,
			   "tcId %d: read wrote past its %u bytes", v->tc_id, v->size);
	PECS_CHECK(t, pecs_cnt_u64(before, pecs_cnt_vec_offset(v, "nr")) == nr,
		   "tcId %d: nr %llu, the group has %u", v->tc_id,
		   (unsigned long long)pecs_cnt_u64(before, 0), nr);
	te = pecs_cnt_vec_offset(v, "time_enabled");
	tr = pecs_cnt_vec_offset(v, "time_running");
	if ((te >= 0 && pecs_cnt_u64(before, te) == 0) ||
	    (tr >= 0 && pecs_cnt_u64(before, tr) == 0) ||
	    (te >= 0 && tr >= 0 && pecs_cnt_u64(before, tr) > pecs_cnt_u64(before, te)))
		PECS_FAIL(t, "tcId %d: times wrong: enabled %llu running %llu", v->tc_id,
			  te >= 0 ? (unsigned long long)pecs_cnt_u64(before, te) : 0ull,
			  tr >= 0 ? (unsigned long long)pecs_cnt_u64(before, tr) : 0ull);
	for (uint32_t m = 0; m < nr; m++) {
		PECS_CHECK(t, pecs_cnt_u64(before, member_off(v, m, "value")) != 0,
			   "tcId %d: member %u value is 0 after 2 ms of TASK_CLOCK", v->tc_id, m);
		if ((off = member_off(v, m, "id")) >= 0)
			PECS_CHECK(t, pecs_cnt_u64(before, off) == ids[m],
				   "tcId %d: entry %u id %llu, IOC_ID of member %u is %llu",
				   v->tc_id, m, (unsigned long long)pecs_cnt_u64(before, off), m,
				   (unsigned long long)ids[m]);
		if ((off = member_off(v, m, "lost")) >= 0)
			PECS_CHECK(t, pecs_cnt_u64(before, off) == 0,
				   "tcId %d: member %u lost %llu on a counting event", v->tc_id, m,
				   (unsigned long long)pecs_cnt_u64(before, off));
	}
}

/* RESET of member m zeroes member m's value alone. */
static void check_resets(struct pecs_t *t, const struct pecs_vec_read_format *v, uint32_t nr,
			 const int *fds, uint64_t *before)
{
	uint64_t after[BUF_U64];

	for (uint32_t m = 0; m < nr; m++) {
		PECS_CHECK_OK(t, pecs_ioctl(t, fds[m], PECS_IOC_RESET, 0), "RESET of member %u", m);
		PECS_CHECK_EQ(t, pecs_read(t, fds[0], after, sizeof(after)), v->size,
			      "tcId %d: read after RESET", v->tc_id);
		for (uint32_t i = 0; i < v->nr_fields; i++) {
			const struct pecs_vec_field *f = &v->fields[i];
			uint64_t now = pecs_cnt_u64(after, f->offset);
			uint64_t want = pecs_cnt_u64(before, f->offset);

			if ((long)f->offset == member_off(v, m, "value"))
				want = 0;
			PECS_CHECK(t, now == want,
				   "tcId %d: after RESET of member %u, %s is %llu, expected %llu",
				   v->tc_id, m, f->name, (unsigned long long)now,
				   (unsigned long long)want);
		}
		memcpy(before, after, v->size);
	}
}

/* One group size. */
static void check_group(struct pecs_t *t, uint64_t rf, uint32_t nr)
{
	const struct pecs_vec_read_format *v = pecs_cnt_vec(rf | PECS_FORMAT_GROUP, nr);
	uint64_t before[BUF_U64], after[BUF_U64], ids[PECS_CNT_MAX_MEMBERS];
	int fds[PECS_CNT_MAX_MEMBERS];
	char why[160];

	if (!v)
		PECS_BROKEN(t, "no read_format vector for 0x%llx with %u members",
			    (unsigned long long)(rf | PECS_FORMAT_GROUP), nr);
	if (pecs_cnt_vec_agrees(v, why, sizeof(why)) < 0)
		PECS_BROKEN(t, "vector disagrees with perf_event_open(2): %s", why);
	PECS_CHECK_OK(t, pecs_cnt_open_group(t, rf | PECS_FORMAT_GROUP, nr, fds, ids),
		      "tcId %d: opening a group of %u", v->tc_id, nr);
	PECS_CHECK_OK(t, pecs_cnt_run(t, fds[0], PECS_IOC_FLAG_GROUP, 2000000),
		      "tcId %d: ENABLE/DISABLE with FLAG_GROUP", v->tc_id);
	check_first_read(t, v, nr, fds[0], ids, before);
	/* every member's fd reads the same group */
	for (uint32_t m = 1; m < nr; m++) {
		memset(after, 0, sizeof(after));
		ssize_t n = pecs_read(t, fds[m], after, sizeof(after));
		PECS_CHECK(t, n == v->size && memcmp(after, before, v->size) == 0,
			   "tcId %d: read through member %u differs from the leader's (%s bytes)",
			   v->tc_id, m, pecs_retname(n));
	}
	check_resets(t, v, nr, fds, before);
	for (uint32_t m = nr; m-- > 0;)
		pecs_close(t, fds[m]);
}

struct group_row {
	struct pecs_row head;
	uint64_t rf; /* read_format without GROUP */
};

#define TE PECS_FORMAT_TOTAL_TIME_ENABLED
#define TR PECS_FORMAT_TOTAL_TIME_RUNNING
#define ID PECS_FORMAT_ID
#define LOST PECS_FORMAT_LOST
#define ROW(name, rf, features) \
	{{"Required.Read.Layout.Group." name, features, BEHAVIOURS_GROUP}, rf}

/* Every combination of the read_format bits below PECS_FORMAT_MAX, GROUP aside. */
static const struct group_row group_rows[] = {
	ROW("Nr", 0, "counting,read.group"),
	ROW("Te", TE, "counting,read.group"),
	ROW("Tr", TR, "counting,read.group"),
	ROW("TeTr", TE | TR, "counting,read.group"),
	ROW("Id", ID, "counting,read.group"),
	ROW("TeId", TE | ID, "counting,read.group"),
	ROW("TrId", TR | ID, "counting,read.group"),
	ROW("TeTrId", TE | TR | ID, "counting,read.group"),
	ROW("Lost", LOST, "counting,read.group,read.lost"),
	ROW("TeLost", TE | LOST, "counting,read.group,read.lost"),
	ROW("TrLost", TR | LOST, "counting,read.group,read.lost"),
	ROW("TeTrLost", TE | TR | LOST, "counting,read.group,read.lost"),
	ROW("IdLost", ID | LOST, "counting,read.group,read.lost"),
	ROW("TeIdLost", TE | ID | LOST, "counting,read.group,read.lost"),
	ROW("TrIdLost", TR | ID | LOST, "counting,read.group,read.lost"),
	ROW("TeTrIdLost", TE | TR | ID | LOST, "counting,read.group,read.lost"),
};

static void group_case(struct pecs_t *t, const struct group_row *r)
{
	PECS_FORMAT_TABLE_COVERS(t, group_rows, PECS_FORMAT_GROUP);
	for (uint32_t nr = 1; nr <= 3; nr++)
		check_group(t, r->rf, nr);
}

PECS_CASE_TABLE(group_rows, group_case);
