/* The toolkit's SAFE layer for what a case sets up on the host: a call, and when it
 * fails, the case ends BROKEN at the caller's file:line, naming the call as written
 * (its arguments) and the errno. As LTP's SAFE_* macros, for the calls a case needs
 * to succeed and never tests.
 *
 * The toolkit has two layers (docs/implementing.md, "The case toolkit"):
 *   raw   the call's value or a negative errno, no verdict: pecs_open(), pecs_ioctl(),
 *         pecs_sampler_open(), pecs_ring_map(), ... A case that tests an error calls
 *         these and checks the answer (PECS_CHECK_ERR).
 *   SAFE  the call, and on an unexpected failure the case ends there. Who failed
 *         decides the verdict:
 *           FAIL     the implementation refused what Linux accepts: PECS_OPEN(),
 *                    PECS_SAMPLER(), and PECS_CHECK_OK(t, raw call) for any other;
 *           BROKEN   the host or the suite's own setup: the macros below, the child
 *                    of kid.h, the coverage checks of coverage.h;
 *           ENV_SKIP the host cannot run the case (a limit, a missing facility):
 *                    decided by the case, or named by the helper that decides it.
 */
#ifndef PECS_TOOLKIT_SAFE_H
#define PECS_TOOLKIT_SAFE_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

#include "pecs/case.h"

/* A libc call that answers -1 and errno on failure (open, pipe, fork, mprotect, ...):
 * its value, or the case ends BROKEN. */
#define PECS_SAFE_SYS(t, call)                                                          \
	({                                                                              \
		long pecs_sys_ = (long)(call);                                          \
		if (pecs_sys_ == -1)                                                    \
			pecs_safe_failed((t), __FILE__, __LINE__, #call, -(long)errno); \
		pecs_sys_;                                                              \
	})

/* A toolkit call into the host that answers -errno (pecs_spinner_start(),
 * pecs_kid_start(), pecs_cnt_dead_pid(), ...): its value, or the case ends BROKEN. */
#define PECS_SAFE_HOST(t, call)                                                         \
	({                                                                              \
		long pecs_host_ = (long)(call);                                         \
		if (pecs_host_ < 0)                                                     \
			pecs_safe_failed((t), __FILE__, __LINE__, #call, pecs_host_);   \
		pecs_host_;                                                             \
	})

/* mmap(2) of the case's own memory (not an event's ring: pecs_mmap() maps those): the
 * address, or the case ends BROKEN naming the length, protection and flags. */
#define PECS_SAFE_MMAP(t, addr, len, prot, flags, fd, off) \
	pecs_safe_mmap((t), __FILE__, __LINE__, (addr), (len), (prot), (flags), (fd), (off))

/* Anonymous private memory of len bytes with protection prot, the case's own (a buffer
 * placed at a page's edge, a page the implementation must not touch): the address, or
 * the case ends BROKEN. Unmapped when the case ends, however it ends. */
#define PECS_SAFE_SCRATCH(t, len, prot) pecs_safe_scratch((t), __FILE__, __LINE__, (len), (prot))

__attribute__((noreturn)) void pecs_safe_failed(struct pecs_t *t, const char *file, int line,
						const char *call, long ret);
void *pecs_safe_mmap(struct pecs_t *t, const char *file, int line, void *addr, size_t len,
		     int prot, int flags, int fd, off_t off);
void *pecs_safe_scratch(struct pecs_t *t, const char *file, int line, size_t len, int prot);

#endif /* PECS_TOOLKIT_SAFE_H */
