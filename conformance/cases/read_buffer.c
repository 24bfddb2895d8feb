/* read() buffer sizes: too small is ENOSPC and leaves the buffer alone; larger returns
 * exactly read_size. */
#include <errno.h>
#include <string.h>

#include "pecs/toolkit/counting.h"

#define RF_ALL_SINGLE                                                              \
	(PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING | PECS_FORMAT_ID | \
	 PECS_FORMAT_LOST)
#define RF_ALL_GROUP (RF_ALL_SINGLE | PECS_FORMAT_GROUP)

/* Every count below read_size, 0 included, fails with ENOSPC and writes nothing. */
static void check_short_reads(struct pecs_t *t, int fd, size_t read_size)
{
	unsigned char buf[512], fill[512];

	memset(fill, 0x5a, sizeof(fill));
	for (size_t count = 0; count < read_size; count++) {
		memcpy(buf, fill, sizeof(buf));
		ssize_t n = pecs_read(t, fd, buf, count);

		PECS_CHECK_ERR(t, n, ENOSPC, "read of %zu bytes (read_size %zu)",
			       count, read_size);
		PECS_CHECK_MEM(t, buf, fill, sizeof(buf));
	}
}

PECS_CASE("Required.Read.Buffer.ShortIsEnospc", "counting,read.lost", "READ-SHORT-ENOSPC")
{
	struct pecs_attr attr;

	pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, RF_ALL_SINGLE);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	check_short_reads(t, fd, pecs_cnt_read_size(RF_ALL_SINGLE, 1));
}

PECS_CASE("Required.Read.Buffer.ShortIsEnospcPlain", "counting", "READ-SHORT-ENOSPC")
{
	struct pecs_attr attr;

	pecs_cnt_attr(t, &attr, PECS_SW_CPU_CLOCK, 0);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	check_short_reads(t, fd, 8);
}

/* A group's read_size grows with each member: the size that fit one member is now short. */
PECS_CASE("Required.Read.Buffer.GroupShortIsEnospc",
	  "counting,read.group,read.lost", "READ-SHORT-ENOSPC,READ-GROUP-SIZE-GROWS")
{
	int fds[3];

	PECS_CHECK_OK(t, pecs_cnt_open_group(t, RF_ALL_GROUP, 3, fds, NULL));
	/* the member's fd has the same read_size as the leader's */
	check_short_reads(t, fds[2], pecs_cnt_read_size(RF_ALL_GROUP, 3));
	check_short_reads(t, fds[0], pecs_cnt_read_size(RF_ALL_GROUP, 3));
}

PECS_CASE("Required.Read.Buffer.LargerReturnsReadSize", "counting", "READ-SIZE-EXACT")
{
	static const uint64_t formats[] = {
		0,
		PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_ID,
		PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING | PECS_FORMAT_ID,
	};
	unsigned char buf[4096];
	struct pecs_attr attr;

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, formats[i]);
		int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);

		PECS_CHECK_EQ(t, pecs_read(t, fd, buf, sizeof(buf)),
			      pecs_cnt_read_size(formats[i], 1));
		/* exactly read_size is enough */
		PECS_CHECK_EQ(t, pecs_read(t, fd, buf, pecs_cnt_read_size(formats[i], 1)),
			      pecs_cnt_read_size(formats[i], 1));
		pecs_close(t, fd);
	}
}

/* A successful call leaves errno as it was, so a read made with errno still EINTR from an
 * earlier interrupted call (a sleep, a poll) is an ordinary read. */
PECS_CASE("Required.Read.Value.StaleErrnoIgnored", "counting", "READ-STALE-ERRNO")
{
	struct pecs_attr attr;
	uint64_t v = ~0ull;
	int fd;

	pecs_attr_counting(t, &attr, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	errno = EINTR;
	PECS_CHECK_EQ(t, pecs_read(t, fd, &v, sizeof(v)), sizeof(v));
	PECS_CHECK_EQ(t, v, 0);
}
