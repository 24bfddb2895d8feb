/* Hardware breakpoint events (PERF_TYPE_BREAKPOINT) for the cases: the attr, the open
 * that must succeed, and what ends a case ENV_SKIP. The address is config1 (bp_addr) and
 * the length config2 (bp_len), as the UAPI's unions lay them out. */
#ifndef PECS_TOOLKIT_BREAKPOINT_H
#define PECS_TOOLKIT_BREAKPOINT_H

#include <stdint.h>
#include <sys/types.h>

#include "pecs/case.h"

/* bp_type bits, <linux/hw_breakpoint.h> */
#define PECS_BP_R 1u
#define PECS_BP_W 2u
#define PECS_BP_RW 3u
#define PECS_BP_X 4u

/* A user-only counting breakpoint on the calling thread, disabled, with attr.size set as
 * pecs_attr_counting() sets it. */
void pecs_bp_attr(struct pecs_t *t, struct pecs_attr *a, uint32_t bp_type, const volatile void *addr,
		  uint64_t len);

/* Whether the implementation has breakpoints at all, asked with a valid 8-byte write
 * breakpoint on the calling thread: ENOENT (no breakpoint PMU: a kernel built without
 * CONFIG_HAVE_HW_BREAKPOINT) and EOPNOTSUPP (no debug register for data breakpoints,
 * hw_breakpoint_event_init) end the case ENV_SKIP with the reason, at the caller's line.
 * Any other answer returns: a case about the rules goes on to them. */
#define PECS_BP_REQUIRE(t) pecs_bp_require_at((t), __FILE__, __LINE__)
void pecs_bp_require_at(struct pecs_t *t, const char *file, int line);

/* Open a breakpoint that must open: the fd, ENV_SKIP as PECS_BP_REQUIRE for ENOENT and
 * EOPNOTSUPP, and FAIL with the attr and the errno for any other refusal. */
#define PECS_BP_OPEN(t, a, pid, cpu, group_fd) \
	pecs_bp_open_at((t), __FILE__, __LINE__, (a), (pid), (cpu), (group_fd))
int pecs_bp_open_at(struct pecs_t *t, const char *file, int line, struct pecs_attr *a, pid_t pid,
		    int cpu, int group_fd);

/* Whether this host's debug registers raise the debug exception at all, asked of the
 * hardware without the implementation under test: a child traced with PTRACE_TRACEME
 * gets an 8-byte write breakpoint in DR0 and an execute breakpoint in DR1
 * (PTRACE_POKEUSER), writes the word and calls the function, and each SIGTRAP stop's DR6
 * says which fired. A hypervisor that keeps the guest's debug registers without ever
 * raising #DB (measured: Firecracker) fires neither, and a case that needs an access to
 * be seen is ENV_SKIP there with the reason, at the caller's line. Where ptrace itself
 * is refused (the process runs under strace or a debugger) the hardware cannot be asked,
 * and the case is ENV_SKIP saying so: on such a host a count of 0 would judge nothing.
 * `type` is PECS_BP_W or PECS_BP_X. */
#define PECS_BP_REQUIRE_FIRING(t, type) pecs_bp_require_firing_at((t), __FILE__, __LINE__, (type))
void pecs_bp_require_firing_at(struct pecs_t *t, const char *file, int line, uint32_t type);

/* Whether /proc/cpuinfo names the AMD breakpoint extension (bpext), which lets x86 take
 * a power-of-two bp_len above 8 as an address mask. */
int pecs_bp_has_bpext(void);

#endif /* PECS_TOOLKIT_BREAKPOINT_H */
