/* read() with PERF_FORMAT_GROUP: all 16 layouts, for groups of 1, 2 and 3 events.
 *
 * Each member's entry is found by its id (IOC_ID of that fd, in creation order) and by
 * RESET of that member alone, which must zero that member's value and nothing else. The
 * same bytes must come back through every member's fd, since a group read always
 * describes the whole group, leader first.
 */
#include <stdio.h>
#include <string.h>

#include "pecs/toolkit/counting.h"

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

/* Checks one group size; returns 0, or -1 after recording a verdict. */
static int check_group(struct pecs_t *t, uint64_t rf, uint32_t nr)
{
	const struct pecs_vec_read_format *v = pecs_cnt_vec(rf | PECS_FORMAT_GROUP, nr);
	uint64_t before[BUF_U64], after[BUF_U64], ids[PECS_CNT_MAX_MEMBERS];
	int fds[PECS_CNT_MAX_MEMBERS];
	long off, te, tr;
	char why[160];
	uint32_t m, i;
	int err;

	if (!v) {
		pecs_verdict(t, PECS_BROKEN, __FILE__, __LINE__,
			     "no read_format vector for 0x%llx with %u members",
			     (unsigned long long)(rf | PECS_FORMAT_GROUP), nr);
		return -1;
	}
	if (pecs_cnt_vec_agrees(v, why, sizeof(why)) < 0) {
		pecs_verdict(t, PECS_BROKEN, __FILE__, __LINE__,
			     "vector disagrees with perf_event_open(2): %s", why);
		return -1;
	}
	err = pecs_cnt_open_group(t, rf | PECS_FORMAT_GROUP, nr, fds, ids);
	if (err < 0) {
		PECS_FAIL_(t, "tcId %d: opening a group of %u: %s", v->tc_id, nr,
			   pecs_retname(err));
		return -1;
	}
	err = pecs_cnt_run(t, fds[0], PECS_IOC_FLAG_GROUP, 2000000);
	if (err < 0) {
		PECS_FAIL_(t, "tcId %d: ENABLE/DISABLE with FLAG_GROUP: %s", v->tc_id,
			   pecs_retname(err));
		return -1;
	}

	memset(before, 0xa5, sizeof(before));
	ssize_t n = pecs_read(t, fds[0], before, sizeof(before));
	if (n != v->size) {
		PECS_FAIL_(t, "tcId %d: read of a %u-member group returned %s, expected %u",
			   v->tc_id, nr, pecs_retname(n), v->size);
		return -1;
	}
	for (i = v->size / 8; i < BUF_U64; i++) {
		if (before[i] != 0xa5a5a5a5a5a5a5a5ull) {
			PECS_FAIL_(t, "tcId %d: read wrote past its %u bytes", v->tc_id, v->size);
			return -1;
		}
	}
	if (pecs_cnt_u64(before, pecs_cnt_vec_offset(v, "nr")) != nr) {
		PECS_FAIL_(t, "tcId %d: nr %llu, the group has %u", v->tc_id,
			   (unsigned long long)pecs_cnt_u64(before, 0), nr);
		return -1;
	}
	te = pecs_cnt_vec_offset(v, "time_enabled");
	tr = pecs_cnt_vec_offset(v, "time_running");
	if ((te >= 0 && pecs_cnt_u64(before, te) == 0) ||
	    (tr >= 0 && pecs_cnt_u64(before, tr) == 0) ||
	    (te >= 0 && tr >= 0 && pecs_cnt_u64(before, tr) > pecs_cnt_u64(before, te))) {
		PECS_FAIL_(t, "tcId %d: times wrong: enabled %llu running %llu", v->tc_id,
			   te >= 0 ? (unsigned long long)pecs_cnt_u64(before, te) : 0ull,
			   tr >= 0 ? (unsigned long long)pecs_cnt_u64(before, tr) : 0ull);
		return -1;
	}
	for (m = 0; m < nr; m++) {
		if (pecs_cnt_u64(before, member_off(v, m, "value")) == 0) {
			PECS_FAIL_(t, "tcId %d: member %u value is 0 after 2 ms of TASK_CLOCK",
				   v->tc_id, m);
			return -1;
		}
		if ((off = member_off(v, m, "id")) >= 0 && pecs_cnt_u64(before, off) != ids[m]) {
			PECS_FAIL_(t, "tcId %d: entry %u id %llu, IOC_ID of member %u is %llu",
				   v->tc_id, m, (unsigned long long)pecs_cnt_u64(before, off), m,
				   (unsigned long long)ids[m]);
			return -1;
		}
		if ((off = member_off(v, m, "lost")) >= 0 && pecs_cnt_u64(before, off) != 0) {
			PECS_FAIL_(t, "tcId %d: member %u lost %llu on a counting event",
				   v->tc_id, m, (unsigned long long)pecs_cnt_u64(before, off));
			return -1;
		}
	}
	/* every member's fd reads the same group */
	for (m = 1; m < nr; m++) {
		memset(after, 0, sizeof(after));
		n = pecs_read(t, fds[m], after, sizeof(after));
		if (n != v->size || memcmp(after, before, v->size) != 0) {
			PECS_FAIL_(t, "tcId %d: read through member %u differs from the leader's (%s bytes)",
				   v->tc_id, m, pecs_retname(n));
			return -1;
		}
	}
	/* RESET of member m zeroes member m's value alone */
	for (m = 0; m < nr; m++) {
		err = pecs_ioctl(t, fds[m], PECS_IOC_RESET, 0);
		if (err < 0) {
			PECS_FAIL_(t, "RESET of member %u: %s", m, pecs_retname(err));
			return -1;
		}
		n = pecs_read(t, fds[0], after, sizeof(after));
		if (n != v->size) {
			PECS_FAIL_(t, "tcId %d: read after RESET returned %s", v->tc_id,
				   pecs_retname(n));
			return -1;
		}
		for (i = 0; i < v->nr_fields; i++) {
			const struct pecs_vec_field *f = &v->fields[i];
			uint64_t now = pecs_cnt_u64(after, f->offset);
			uint64_t want = pecs_cnt_u64(before, f->offset);

			if ((long)f->offset == member_off(v, m, "value"))
				want = 0;
			if (now != want) {
				PECS_FAIL_(t, "tcId %d: after RESET of member %u, %s is %llu, expected %llu",
					   v->tc_id, m, f->name, (unsigned long long)now,
					   (unsigned long long)want);
				return -1;
			}
		}
		memcpy(before, after, v->size);
	}
	for (m = nr; m-- > 0;)
		pecs_close(t, fds[m]);
	return 0;
}

static void check_groups(struct pecs_t *t, uint64_t rf)
{
	for (uint32_t nr = 1; nr <= 3; nr++)
		if (check_group(t, rf, nr) < 0)
			return;
}

#define GROUP_CASE(name, rf, features)                                             \
	PECS_CASE(read_group_##name, "Required.Read.Layout.Group." #name, features, \
		  BEHAVIOURS_GROUP)                                                 \
	{                                                                           \
		check_groups(t, (rf));                                              \
	}

#define TE PECS_FORMAT_TOTAL_TIME_ENABLED
#define TR PECS_FORMAT_TOTAL_TIME_RUNNING
#define ID PECS_FORMAT_ID
#define LOST PECS_FORMAT_LOST

GROUP_CASE(Nr, 0, "counting,read.group")
GROUP_CASE(Te, TE, "counting,read.group")
GROUP_CASE(Tr, TR, "counting,read.group")
GROUP_CASE(TeTr, TE | TR, "counting,read.group")
GROUP_CASE(Id, ID, "counting,read.group")
GROUP_CASE(TeId, TE | ID, "counting,read.group")
GROUP_CASE(TrId, TR | ID, "counting,read.group")
GROUP_CASE(TeTrId, TE | TR | ID, "counting,read.group")
GROUP_CASE(Lost, LOST, "counting,read.group,read.lost")
GROUP_CASE(TeLost, TE | LOST, "counting,read.group,read.lost")
GROUP_CASE(TrLost, TR | LOST, "counting,read.group,read.lost")
GROUP_CASE(TeTrLost, TE | TR | LOST, "counting,read.group,read.lost")
GROUP_CASE(IdLost, ID | LOST, "counting,read.group,read.lost")
GROUP_CASE(TeIdLost, TE | ID | LOST, "counting,read.group,read.lost")
GROUP_CASE(TrIdLost, TR | ID | LOST, "counting,read.group,read.lost")
GROUP_CASE(TeTrIdLost, TE | TR | ID | LOST, "counting,read.group,read.lost")
