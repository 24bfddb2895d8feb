/* perf_event_attr.size: the extension rule. A short attr is zero-extended, a long one is
 * accepted when the bytes the implementation does not know are zero, and every refusal is
 * E2BIG with the implementation's own size written back so the caller can retry. */
#include <string.h>

#include "pecs/toolkit/counting.h"

#define BEHAVIOURS_E2BIG "OPEN-SIZE-E2BIG,OPEN-SIZE-E2BIG-WRITEBACK"

PECS_CASE("Required.Open.AttrSize.NullAttrEfault", "", "OPEN-ATTR-NULL-EFAULT")
{
	PECS_CHECK_ERR(t, pecs_open(t, NULL, 0, -1, -1, 0), EFAULT);
}

PECS_CASE("Required.Open.AttrSize.ZeroMeansVer0", "",
	  "OPEN-SIZE-ZERO-VER0,OPEN-SIZE-NO-WRITEBACK-ON-SUCCESS")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.size = 0;
	/* past VER0's 64 bytes: not read */
	attr.sample_stack_user = 3;
	attr.reserved_2 = 1;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	PECS_CHECK_EQ(t, attr.size, 0);
	/* inside VER0's 64 bytes: read and checked */
	attr.read_format = PECS_FORMAT_MAX;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
	PECS_CHECK_EQ(t, attr.size, 0);
}

/* Below VER0 nothing is a valid attr. */
PECS_CASE("Required.Open.AttrSize.BelowVer0E2big", "", BEHAVIOURS_E2BIG)
{
	static const uint32_t sizes[] = {1, 8, 32, PECS_ATTR_SIZE_VER0 - 1};
	struct pecs_attr attr;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
		attr.size = sizes[i];
		int ret = pecs_open(t, &attr, 0, -1, -1, 0);

		PECS_CHECK_ERR(t, ret, E2BIG, "size %u", sizes[i]);
		PECS_CHECK(t, attr.size == pecs_host(t)->attr_size,
			   "size %u: E2BIG wrote back %u, expected %u", sizes[i], attr.size,
			   pecs_host(t)->attr_size);
	}
}

/* The size E2BIG writes back is the implementation's own struct: a published version, or
 * (on a kernel newer than the vectors) a larger multiple of 8. Checked against the vectors,
 * not against the size the adapter probed the same way. */
PECS_CASE("Required.Open.AttrSize.WriteBackIsPublishedSize", "", BEHAVIOURS_E2BIG)
{
	struct pecs_attr attr;
	uint32_t latest = 0;
	int published = 0;

	if (pecs_vec_attr_sizes_count == 0)
		PECS_BROKEN(t, "no attr size vectors");
	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.size = PECS_ATTR_SIZE_VER0 - 8;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), E2BIG);
	for (size_t i = 0; i < pecs_vec_attr_sizes_count; i++) {
		published |= attr.size == pecs_vec_attr_sizes[i].size;
		if (pecs_vec_attr_sizes[i].size > latest)
			latest = pecs_vec_attr_sizes[i].size;
	}
	PECS_CHECK(t, published || (attr.size > latest && attr.size % 8 == 0),
		   "E2BIG wrote back %u: neither a published attr size nor a newer one (a "
		   "multiple of 8 above %u)", attr.size, latest);
}

/* Above a page nothing is read at all, zero or not. */
PECS_CASE("Required.Open.AttrSize.OverPageE2big", "", BEHAVIOURS_E2BIG)
{
	size_t len;
	struct pecs_attr *attr = pecs_cnt_big_attr(t, PECS_SW_CPU_CLOCK, &len);
	uint32_t page = (uint32_t)pecs_host(t)->page_size;

	if (!attr)
		PECS_ENV_SKIP(t, "page size %ld is larger than the case's buffer",
			      pecs_host(t)->page_size);
	attr->size = page + 1;
	PECS_CHECK_ERR(t, pecs_open(t, attr, 0, -1, -1, 0), E2BIG);
	PECS_CHECK_EQ(t, attr->size, pecs_host(t)->attr_size);
	attr->size = page + 8;
	PECS_CHECK_ERR(t, pecs_open(t, attr, 0, -1, -1, 0), E2BIG);
	PECS_CHECK_EQ(t, attr->size, pecs_host(t)->attr_size);
}

PECS_CASE("Required.Open.AttrSize.EachPublishedSizeOk", "", "OPEN-SIZE-VERSIONS-OK")
{
	size_t len;
	struct pecs_attr *attr = pecs_cnt_big_attr(t, PECS_SW_CPU_CLOCK, &len);

	if (!attr)
		PECS_ENV_SKIP(t, "page size %ld is larger than the case's buffer",
			      pecs_host(t)->page_size);
	if (pecs_vec_attr_sizes_count == 0)
		PECS_BROKEN(t, "no attr size vectors");
	for (size_t i = 0; i < pecs_vec_attr_sizes_count; i++) {
		const struct pecs_vec_attr_size *v = &pecs_vec_attr_sizes[i];

		attr->size = v->size;
		int ret = pecs_open(t, attr, 0, -1, -1, 0);

		PECS_CHECK_OK(t, ret, "tcId %d: %s (%u bytes)", v->tc_id, v->name, v->size);
		PECS_CHECK(t, attr->size == v->size, "tcId %d: size changed to %u on success",
			   v->tc_id, attr->size);
		pecs_close(t, ret);
	}
}

/* Sizes that are no published version are fine too: the rule is about bytes. */
PECS_CASE("Required.Open.AttrSize.OddSizesOk", "", "OPEN-SIZE-ANY-OK")
{
	size_t len;
	struct pecs_attr *attr = pecs_cnt_big_attr(t, PECS_SW_CPU_CLOCK, &len);
	const uint32_t sizes[] = {PECS_ATTR_SIZE_VER0 + 1, 100, pecs_host(t)->attr_size + 1,
				  pecs_host(t)->attr_size + 8, 1000};

	if (!attr)
		PECS_ENV_SKIP(t, "page size %ld is larger than the case's buffer",
			      pecs_host(t)->page_size);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (sizes[i] > pecs_host(t)->page_size)
			continue;
		attr->size = sizes[i];
		int ret = pecs_open(t, attr, 0, -1, -1, 0);

		PECS_CHECK_OK(t, ret, "size %u", sizes[i]);
		pecs_close(t, ret);
	}
}

PECS_CASE("Required.Open.AttrSize.PageWithZeroTailOk", "", "OPEN-SIZE-ZERO-TAIL-OK")
{
	size_t len;
	struct pecs_attr *attr = pecs_cnt_big_attr(t, PECS_SW_CPU_CLOCK, &len);

	if (!attr)
		PECS_ENV_SKIP(t, "page size %ld is larger than the case's buffer",
			      pecs_host(t)->page_size);
	attr->size = (uint32_t)pecs_host(t)->page_size;
	PECS_CHECK_OK(t, pecs_open(t, attr, 0, -1, -1, 0));
}

/* A non-zero byte the implementation does not know could be a request it would ignore. */
PECS_CASE("Required.Open.AttrSize.NonzeroTailE2big", "",
	  BEHAVIOURS_E2BIG ",OPEN-SIZE-NONZERO-TAIL-E2BIG")
{
	size_t len;
	struct pecs_attr *attr = pecs_cnt_big_attr(t, PECS_SW_CPU_CLOCK, &len);
	uint32_t known = pecs_host(t)->attr_size;
	uint32_t page = (uint32_t)pecs_host(t)->page_size;
	unsigned char *bytes = (unsigned char *)attr;
	const uint32_t where[] = {known, known + 7, page - 1};

	if (!attr)
		PECS_ENV_SKIP(t, "page size %ld is larger than the case's buffer",
			      pecs_host(t)->page_size);
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		bytes[where[i]] = 1;
		attr->size = where[i] + 1;
		int ret = pecs_open(t, attr, 0, -1, -1, 0);

		PECS_CHECK_ERR(t, ret, E2BIG, "non-zero byte %u, size %u",
			       where[i], where[i] + 1);
		PECS_CHECK(t, attr->size == known, "E2BIG wrote back %u, expected %u",
			   attr->size, known);
		/* the same byte just past size is not part of the attr */
		attr->size = where[i];
		ret = pecs_open(t, attr, 0, -1, -1, 0);
		PECS_CHECK_OK(t, ret, "non-zero byte %u just past size %u", where[i],
			      where[i]);
		pecs_close(t, ret);
		bytes[where[i]] = 0;
	}
}

/* Fields past size are not part of the attr, whatever the struct holds there. */
PECS_CASE("Required.Open.AttrSize.FieldsPastSizeIgnored", "", "OPEN-SIZE-TRUNCATES")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.size = PECS_ATTR_SIZE_VER0;
	/* each of these alone is EINVAL when inside size */
	attr.reserved_2 = 1;
	attr.aux_action = ~0u;
	attr.sample_stack_user = 3;
	attr.config3 = ~0ull;
	PECS_CHECK_OK(t, pecs_open(t, &attr, 0, -1, -1, 0));
	attr.size = pecs_host(t)->attr_size;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
}
