/* write() on an event fd: perf events define no write, so the kernel refuses it. */
#include "pecs/toolkit/counting.h"

PECS_CASE("Required.Read.Write.IsEinval", "", "READ-WRITE-EINVAL")
{
	uint64_t word = 0;
	struct pecs_attr attr;

	/* The entry is optional in the vtable, not in the ABI: without it this case cannot
	 * see the EINVAL every Linux gives (docs/implementing.md, "The seam"). */
	if (!PECS_IMPL_HAS(pecs_impl_of(t), write))
		PECS_FAIL(t, "the implementation has no write entry, so write(2) on an event fd "
			  "cannot give Linux's EINVAL: set one that answers -EINVAL");
	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	int fd = PECS_OPEN(t, &attr, 0, -1, -1, 0);
	PECS_CHECK_ERR(t, pecs_write(t, fd, &word, sizeof(word)), EINVAL);
	/* a zero-length write is refused the same way */
	PECS_CHECK_ERR(t, pecs_write(t, fd, &word, 0), EINVAL);
	/* the fd is looked up first: once closed it is EBADF */
	PECS_CHECK_OK(t, pecs_close(t, fd));
	PECS_CHECK_ERR(t, pecs_write(t, fd, &word, sizeof(word)), EBADF, "closed");
}
