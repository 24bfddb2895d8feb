/* A traced task's registers and user stack at a sample stop (event_trace_regs.h), as
 * arch/x86/kernel/perf_regs.c perf_reg_value() reads the interrupted pt_regs and
 * kernel/events/core.c perf_output_sample_ustack() copies from the user SP. */
#define _GNU_SOURCE
#include "ref/event/event_trace_regs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "ref/event/event.h"

#define REGS_FIELDS (PECS_SAMPLE_REGS_USER | PECS_SAMPLE_REGS_INTR | PECS_SAMPLE_STACK_USER)

#if defined(__x86_64__)
static void perf_order(const struct user_regs_struct *r, uint64_t *v)
{
	const uint64_t in[REF_TRACE_NR_REGS] = {
		r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->rip, r->eflags, r->cs, r->ss,
		/* DS, ES, FS, GS: perf_reg_validate() refuses them for a 64-bit task. */
		0, 0, 0, 0,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
	};

	memcpy(v, in, sizeof(in));
}

void ref_trace_regs_take(struct ref_event *const *evs, size_t nr, pid_t pid,
			 const struct user_regs_struct *r, struct ref_trace_regs *out,
			 struct pecs_sample *s)
{
	uint32_t want = 0, any = 0;
	struct iovec local, remote;
	ssize_t got;

	out->stack = NULL;
	for (size_t i = 0; i < nr; i++) {
		uint64_t st = evs[i]->attr.sample_type;

		any |= (st & REGS_FIELDS) != 0;
		if ((st & PECS_SAMPLE_STACK_USER) && evs[i]->attr.sample_stack_user > want)
			want = evs[i]->attr.sample_stack_user;
	}
	if (!any)
		return;
	perf_order(r, out->regs);
	s->regs_abi = PECS_SAMPLE_REGS_ABI_64;
	s->nr_regs = REF_TRACE_NR_REGS;
	s->regs = out->regs;
	if (!want || !(out->stack = malloc(want)))
		return;
	local = (struct iovec){ out->stack, want };
	remote = (struct iovec){ (void *)(uintptr_t)r->rsp, want };
	/* Partial at the first page it cannot read, as the kernel's copy at a fault. */
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	s->stack = out->stack;
	s->stack_size = got > 0 ? (uint32_t)got : 0;
}
#else
void ref_trace_regs_take(struct ref_event *const *evs, size_t nr, pid_t pid,
			 const struct user_regs_struct *r, struct ref_trace_regs *out,
			 struct pecs_sample *s)
{
	(void)evs, (void)nr, (void)pid, (void)r, (void)s;
	out->stack = NULL;
}
#endif

void ref_trace_regs_done(struct ref_trace_regs *out)
{
	free(out->stack);
	out->stack = NULL;
}
