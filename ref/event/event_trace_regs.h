/* The registers and user stack of a traced task at a sample stop, for REGS_USER,
 * REGS_INTR and STACK_USER. Private to ref/event. */
#ifndef REF_EVENT_EVENT_TRACE_REGS_H
#define REF_EVENT_EVENT_TRACE_REGS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "pecs/sample.h"

struct ref_event;

/* x86-64's registers in perf's numbering (enum perf_event_x86_regs). */
#define REF_TRACE_NR_REGS 24u

struct ref_trace_regs {
	uint64_t regs[REF_TRACE_NR_REGS];
	void *stack; /* malloc'd; free with ref_trace_regs_done() */
};

/* When one of evs[0..nr) samples registers or the user stack: gives s the registers r
 * (a stopped task's, from PTRACE_GETREGS) and the stack of pid from their SP, as many
 * bytes as the largest sample_stack_user asks and can be read (the kernel's copy stops
 * at a fault too). Otherwise s keeps abi 0. */
void ref_trace_regs_take(struct ref_event *const *evs, size_t nr, pid_t pid,
			 const struct user_regs_struct *r, struct ref_trace_regs *out,
			 struct pecs_sample *s);
void ref_trace_regs_done(struct ref_trace_regs *out);

#endif /* REF_EVENT_EVENT_TRACE_REGS_H */
