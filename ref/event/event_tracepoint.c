/* The syscalls:* tracepoints and the COMM records of the calling process: what Linux
 * raises from its syscall entry and exit paths and from __set_task_comm(), raised here
 * when the caller says the thread did it (ref_engine_task_event()), since an engine in
 * the caller's own process does not see its system calls. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref/event/event.h"

/* Where the kernel's perf_tp_event() and perf_iterate_sb() find their events: those
 * of the current task (with inherit, of the threads it made, which the engine cannot
 * tell from older threads of the process) and the cpu-wide ones of the current CPU. */
static int sees(const struct ref_event *ev, const struct pecs_sample *who)
{
	if (ev->cpu >= 0 && (uint32_t)ev->cpu != who->cpu)
		return 0;
	if (ev->pid == -1 || (pid_t)who->tid == ev->tid)
		return 1;
	return (ev->attr.flags & PECS_ATTR_INHERIT) && ev->same_process &&
	       (pid_t)who->pid == getpid();
}

/* struct syscall_trace_enter / _exit as perf_syscall_enter() and _exit() fill them:
 * the trace_entry header (common_type, flags, preempt count, pid), the call's number,
 * then its arguments or its return, each a u64 from offset 16. raw_syscalls' records
 * are the same bytes for a call number >= 0: its id is a long at 8 (the int and its zero
 * pad), then all six arguments. The kernel pads the payload so that with its u32 size it
 * fills whole u64s; the pad is zero. */
static uint32_t build_raw(const struct ref_event *ev, const struct pecs_task_event *te,
			  const struct pecs_sample *who, uint8_t *raw, size_t cap)
{
	uint32_t n = ev->tp.exit ? 1 : ev->tp.nargs;
	uint32_t size = 16 + 8 * n;
	uint32_t padded = ((size + 4 + 7) & ~7u) - 4;
	int32_t pid = (int32_t)who->tid, nr = te->nr;

	if (padded > cap)
		return 0;
	memset(raw, 0, padded);
	memcpy(raw, &ev->tp.type, 2);
	memcpy(raw + 4, &pid, 4);
	memcpy(raw + 8, &nr, 4);
	if (ev->tp.exit)
		memcpy(raw + 16, &te->ret, 8);
	else
		memcpy(raw + 16, te->args, 8 * (size_t)n);
	return padded;
}

static uint64_t event_time(const struct ref_event *ev, const struct pecs_sample *who)
{
	struct timespec ts;

	if (ev->clock < 0 || clock_gettime(ev->clock, &ts))
		return who->time;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* perf_swevent_event() with a count of 1: the hit counts, and samples once the
 * period's hits are in. A frequency is taken as period 1, where Linux starts one. */
static void hit(struct ref_event *ev, const struct pecs_task_event *te,
		const struct pecs_sample *who)
{
	uint64_t period = (ev->attr.flags & PECS_ATTR_FREQ) ? 1 : ev->period;
	uint8_t raw[16 + 8 * 6 + 8] __attribute__((aligned(8)));
	uint64_t ip = te->ip;
	struct pecs_sample s;

	ev->count++;
	ref_event_update_userpage(ev);
	if (!ref_attr_is_sampling(&ev->attr) || ++ev->tp_left < period)
		return;
	ev->tp_left = 0;
	s = *who;
	s.time = event_time(ev, who);
	s.period = (ev->attr.flags & PECS_ATTR_FREQ) ? 1 : 0;
	s.ips = ip ? &ip : NULL;
	s.nr_ips = ip ? 1 : 0;
	if (ev->attr.sample_type & PECS_SAMPLE_RAW) {
		s.raw = raw;
		s.raw_size = build_raw(ev, te, who, raw, sizeof(raw));
	}
	ref_event_deliver_locked(ev, &s);
}

void ref_event_task_event(struct ref_event *ev, const struct pecs_task_event *te,
			  const struct pecs_sample *who)
{
	if (!sees(ev, who))
		return;
	if (te->what == PECS_TASK_COMM && te->comm) {
		struct pecs_sample s = *who;

		s.time = event_time(ev, who);
		ref_event_sb_comm(ev, &s, te->comm, 0);
		return;
	}
	if (ev->kind != REF_KIND_SYSCALL_TP || !ev->running ||
	    (!ev->tp.any && (ev->tp.nr < 0 || ev->tp.nr != te->nr)))
		return;
	/* raw_syscalls' records are made in the kernel's context (perf_fetch_caller_regs):
	 * perf_tp_event_match() drops them for an exclude_kernel event. */
	if (ev->tp.any && (ev->attr.flags & PECS_ATTR_EXCLUDE_KERNEL))
		return;
	if ((te->what == PECS_TASK_SYSCALL_EXIT) == ev->tp.exit)
		hit(ev, te, who);
}
