/* Bad user pointers beside fault_pointers.c's PROT_NONE ones: the attr of perf_event_open
 * and PERF_EVENT_IOC_MODIFY_ATTRIBUTES (perf_copy_attr: get_user of the size, then
 * copy_struct_from_user), the filter string of PERF_EVENT_IOC_SET_FILTER (strndup_user),
 * and buffers the kernel writes (read(2), IOC_ID) that are read-only or run into an
 * inaccessible page. Every one is EFAULT (measured here); an implementation that touches
 * them in the caller's process would crash instead. */
#include <string.h>
#include <sys/mman.h>

#include "pecs/case.h"
#include "pecs/toolkit/safe.h"

/* Two pages, the second one PROT_NONE: bytes placed at the end of the first run into it.
 * Unmapped when the case ends; the case is BROKEN if the host refused. */
static char *edge_pages(struct pecs_t *t)
{
	char *p = PECS_SAFE_SCRATCH(t, 8192, PROT_READ | PROT_WRITE);

	PECS_SAFE_SYS(t, mprotect(p + 4096, 4096, PROT_NONE));
	return p;
}

/* An attr whose bytes from off on are inaccessible (its first min(off, known) bytes are
 * a's, the rest up to off zero), opened; -errno or 0. */
static int open_cut(struct pecs_t *t, char *two, const struct pecs_attr *a, size_t known,
		    size_t off)
{
	struct pecs_attr *at = (struct pecs_attr *)(two + 4096 - off);
	int fd;

	memset(at, 0, off);
	memcpy(at, a, off < known ? off : known);
	fd = pecs_open(t, at, 0, -1, -1, 0);
	if (fd >= 0)
		pecs_close(t, fd);
	return fd < 0 ? fd : 0;
}

PECS_CASE("Required.Open.AttrSize.InaccessibleAttrEfault", "", "OPEN-ATTR-BAD-PTR-EFAULT")
{
	size_t known = pecs_host(t)->attr_size;
	struct pecs_attr a;
	char *two = edge_pages(t);
	int r;

	if (known < 64 || known > sizeof(a))
		known = sizeof(a);
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.size = (uint32_t)known;
	r = pecs_open(t, (struct pecs_attr *)(two + 4096), 0, -1, -1, 0);
	PECS_CHECK_ERR(t, r, EFAULT, "attr on a PROT_NONE page");
	/* The size field is readable, the fields after it are not. */
	r = open_cut(t, two, &a, known, 16);
	PECS_CHECK_ERR(t, r, EFAULT, "attr cut after 16 bytes");
	/* Every known byte readable, but the size claims 64 more: the check that the tail
	 * is zero reads into the PROT_NONE page. */
	a.size = (uint32_t)(known + 64);
	r = open_cut(t, two, &a, known, known + 8);
	PECS_CHECK_ERR(t, r, EFAULT, "tail of a %u-byte attr inaccessible", a.size);
}

PECS_CASE("Required.Ioctl.ModifyAttributes.InaccessiblePointerEfault", "counting",
	  "OPEN-ATTR-BAD-PTR-EFAULT")
{
	struct pecs_attr a;
	char *two = edge_pages(t);
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)(two + 4096)),
		       EFAULT);
}

PECS_CASE("Required.Ioctl.SetFilter.InaccessiblePointerEfault", "counting",
	  "IOC-SET-FILTER-BAD-PTR-EFAULT")
{
	struct pecs_attr a;
	char *two = edge_pages(t);
	int fd, r;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	r = pecs_ioctl(t, fd, PECS_IOC_SET_FILTER, (unsigned long)(two + 4096));
	PECS_CHECK_ERR(t, r, EFAULT, "filter on a PROT_NONE page");
	/* A string with no NUL before the inaccessible page. */
	memset(two, 'a', 4096);
	r = pecs_ioctl(t, fd, PECS_IOC_SET_FILTER, (unsigned long)(two + 4000));
	PECS_CHECK_ERR(t, r, EFAULT, "filter running into a PROT_NONE page");
	/* A readable string is refused for what it says, not where it is. */
	r = pecs_ioctl(t, fd, PECS_IOC_SET_FILTER, (unsigned long)"x");
	PECS_CHECK_ERR(t, r, EINVAL, "filter \"x\" on a software event");
}

/* Where the kernel writes: a read-only page, and a buffer whose second half is the
 * inaccessible page. The size check comes before the copy. */
PECS_CASE("Required.Read.Buffer.ReadOnlyOrCutShortEfault", "counting",
	  "READ-BAD-BUFFER-EFAULT,IOC-ID-BAD-PTR-EFAULT")
{
	struct pecs_attr a;
	char *two = edge_pages(t), *ro;
	uint64_t v[2];
	int fd;

	ro = PECS_SAFE_SCRATCH(t, 4096, PROT_READ);
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = PECS_FORMAT_ID;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_read(t, fd, ro, 16), EFAULT);
	PECS_CHECK_ERR(t, pecs_read(t, fd, two + 4096 - 8, 16), EFAULT);
	PECS_CHECK_ERR(t, pecs_read(t, fd, two + 4096, 8), ENOSPC);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_ID, (unsigned long)ro), EFAULT);
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
}
