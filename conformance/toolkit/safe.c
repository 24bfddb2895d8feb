#include "pecs/toolkit/safe.h"

#include <stdlib.h>
#include <sys/mman.h>

/* What a scratch mapping's deferred unmap needs: the case's stack is gone by then. */
struct scratch {
	void *addr;
	size_t len;
};

void pecs_safe_failed(struct pecs_t *t, const char *file, int line, const char *call, long ret)
{
	pecs_end(t, PECS_BROKEN, file, line, "%s failed: %s", call, pecs_errname((int)-ret));
}

void *pecs_safe_mmap(struct pecs_t *t, const char *file, int line, void *addr, size_t len,
		     int prot, int flags, int fd, off_t off)
{
	void *p = mmap(addr, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		pecs_end(t, PECS_BROKEN, file, line,
			 "mmap(%p, %zu bytes, prot %#x, flags %#x, fd %d, offset %lld) failed: %s",
			 addr, len, prot, flags, fd, (long long)off, pecs_errname(errno));
	return p;
}

static void scratch_unmap(void *arg)
{
	struct scratch *s = arg;

	munmap(s->addr, s->len);
	free(s);
}

void *pecs_safe_scratch(struct pecs_t *t, const char *file, int line, size_t len, int prot)
{
	struct scratch *s = malloc(sizeof(*s));

	if (!s)
		pecs_end(t, PECS_BROKEN, file, line, "scratch memory: malloc failed");
	s->len = len;
	s->addr = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->addr == MAP_FAILED) {
		int err = errno;

		free(s);
		pecs_end(t, PECS_BROKEN, file, line,
			 "mmap(NULL, %zu bytes, prot %#x, MAP_PRIVATE | MAP_ANONYMOUS) failed: %s",
			 len, prot, pecs_errname(err));
	}
	pecs_defer(t, scratch_unmap, s);
	return s->addr;
}
