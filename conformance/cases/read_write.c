/* write() on an event fd: perf events define no write, so the kernel refuses it. */
#include "pecs/toolkit/counting.h"

PECS_CASE("Required.Read.Write.IsEinval", "", "READ-WRITE-EINVAL")
{
	uint64_t word = 0;
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	ssize_t n = pecs_write(t, fd, &word, sizeof(word));

	if (n == -ENOSYS)
		PECS_UNSUPPORTED(t, "the implementation has no write entry");
	PECS_CHECK_ERR(t, n, EINVAL);
	/* a zero-length write is refused the same way */
	PECS_CHECK_ERR(t, pecs_write(t, fd, &word, 0), EINVAL);
	/* the fd is looked up first: once closed it is EBADF */
	PECS_CHECK_OK(t, pecs_close(t, fd));
	PECS_CHECK_ERR(t, pecs_write(t, fd, &word, sizeof(word)), EBADF, "closed");
}
