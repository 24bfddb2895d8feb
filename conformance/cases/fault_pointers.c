/* Pointers that are not NULL but point at nothing the caller may touch: Linux's
 * copy_to_user()/copy_from_user() fail and the call is EFAULT (measured here), where an
 * implementation dereferencing them in the caller's process would crash. */
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"

/* A page mapped PROT_NONE (BROKEN if the host refuses one), unmapped when the case ends. */
static void *inaccessible(struct pecs_t *t)
{
	return PECS_SAFE_SCRATCH(t, 4096, PROT_NONE);
}

PECS_CASE("Required.Read.Buffer.InaccessibleEfault", "counting", "READ-BAD-BUFFER-EFAULT")
{
	void *bad = inaccessible(t);
	struct pecs_attr a;
	uint64_t v[2];
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.read_format = PECS_FORMAT_ID;
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_read(t, fd, bad, 16), EFAULT);
	/* The fault changes nothing: the fd reads normally afterwards. */
	PECS_CHECK_EQ(t, pecs_read(t, fd, v, sizeof(v)), sizeof(v));
}

PECS_CASE("Required.Ioctl.Id.InaccessiblePointerEfault", "counting", "IOC-ID-BAD-PTR-EFAULT")
{
	void *bad = inaccessible(t);
	struct pecs_attr a;
	uint64_t id = 0;
	int fd;

	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_ID, (unsigned long)bad), EFAULT);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK(t, id != 0, "IOC_ID gave id 0 after the fault");
}

PECS_CASE("Required.Ioctl.Period.InaccessiblePointerEfault", "counting",
	  "IOC-PERIOD-BAD-PTR-EFAULT")
{
	void *bad = inaccessible(t);
	struct pecs_attr a;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, 1000000, PECS_SAMPLE_IP);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)bad), EFAULT);
	/* The value is copied before the event is looked at: a counting event faults too. */
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, (unsigned long)bad), EFAULT);
}
