/* perf_event_attr as the engine accepts it: the copy-in rules of perf_copy_attr() and
 * the event kinds the engine's "PMUs" take. */
#ifndef REF_ATTR_H
#define REF_ATTR_H

#include <stdint.h>

#include "pecs/abi.h"
#include "pecs/ref.h"
#include "ref/host/host.h"

/* The host limits validation depends on. */
struct ref_limits {
	int ncpus;
	long page_size;
	int max_stack;
	int max_sample_rate;
	int mlock_kb;
};

/* attr.aux_action's bits (perf_event_attr: aux_start_paused, aux_pause, aux_resume).
 * PECS_AUX_ACTION_RESERVED_MASK in pecs/abi.h covers the rest. */
#define REF_AUX_START_PAUSED (1u << 0)
#define REF_AUX_PAUSE (1u << 1)
#define REF_AUX_RESUME (1u << 2)

/* Copies the caller's attr (attr->size bytes, 0 meaning VER0) into *out, then applies
 * perf_copy_attr()'s checks in the kernel's order. On E2BIG the size the engine knows
 * (136) is written back into uattr->size. Resolves sample_max_stack 0 to the limit. */
int ref_attr_copy(struct pecs_attr *uattr, struct pecs_attr *out, const struct ref_limits *lim,
		  const struct ref_policy *pol);

/* What an opened event counts. */
enum ref_kind {
	REF_KIND_CPU_CLOCK,
	REF_KIND_TASK_CLOCK,
	REF_KIND_PAGE_FAULTS,
	REF_KIND_PAGE_FAULTS_MIN,
	REF_KIND_PAGE_FAULTS_MAJ,
	REF_KIND_CONTEXT_SWITCHES,
	REF_KIND_CPU_MIGRATIONS,
	REF_KIND_ZERO, /* events that honestly never fire here: DUMMY, BPF_OUTPUT, x86 faults */
	REF_KIND_SYSCALL_TP, /* a syscalls:* tracepoint: fires when told (ref_engine_task_event) */
};

/* The PMU lookup of perf_init_event() and its event_init(): ENOENT for types and
 * configs no PMU takes, EINVAL where Linux's own PMU refuses (a tracepoint id that is
 * not a syscall tracepoint of the host's tracefs, a breakpoint the rules refuse),
 * EOPNOTSUPP for branch stacks and extended registers, ENOSPC for any valid breakpoint
 * (ref_attr_breakpoint). cpu_wide: pid -1. *tp is filled for a tracepoint. */
int ref_attr_kind(const struct pecs_attr *a, int cpu_wide, enum ref_kind *kind,
		  struct ref_syscall_tp *tp, const struct ref_policy *pol);

/* The breakpoint PMU's event_init on x86-64 (hw_breakpoint_event_init,
 * register_perf_hw_breakpoint, hw_breakpoint_arch_parse): EOPNOTSUPP for branch stacks
 * and for a range length the CPU has no extension for, EINVAL for the type, length and
 * alignment rules, EINVAL or EPERM for a kernel address. The engine sets no debug
 * register, so a breakpoint that passes them all is ENOSPC. */
int ref_attr_breakpoint(const struct pecs_attr *a, const struct ref_policy *pol);

/* Clock events are the two Linux moves onto their own hrtimer PMUs. */
static inline int ref_kind_is_clock(enum ref_kind k)
{
	return k == REF_KIND_CPU_CLOCK || k == REF_KIND_TASK_CLOCK;
}

/* perf_get_aux_event(): aux_pause, aux_resume and a non-zero aux_sample_size each need
 * an AUX event to lead the group, and the engine has none, so an attr asking for one is
 * refused (EINVAL) once the group checks have passed. */
static inline int ref_attr_needs_aux_leader(const struct pecs_attr *a)
{
	return (a->aux_action & (REF_AUX_PAUSE | REF_AUX_RESUME)) || a->aux_sample_size != 0;
}

/* is_sampling_event(): the period/frequency union is non-zero. */
static inline int ref_attr_is_sampling(const struct pecs_attr *a)
{
	return a->sample_period != 0;
}


#endif /* REF_ATTR_H */
