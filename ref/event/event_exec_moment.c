/* Where inside an exec the kernel turns a task's events on and off, for a tracer that
 * sees the exec only at its end.
 *
 * perf_event_exec() runs in begin_new_exec(), after the old program's memory is gone and
 * before the new one is loaded; the tracer's stop (PTRACE_EVENT_EXEC) comes after the
 * load. Between the two the kernel's events count what the load costs: measured on this
 * machine (a kernel event opened with enable_on_exec, read at the stop), 2 or 3 page
 * faults (the kernel writing the new stack, zeroing the bss) and 40 to 70% of the exec's
 * CPU time from a small process (0.3 to 1.2 ms of 0.5 to 1.9 ms, under load).
 *
 * Where the interposer's host forked the task, the task noted its CPU clock and faults
 * just before execve (struct pecs_exec_note): the exec is then bracketed. The moment is
 * taken at the middle of its CPU time (off by at most half of it; the part before
 * perf_event_exec() grows with the old program's memory, which exec_mmap() tears down),
 * and past all its faults but the pages execve's copy of the strings faults in, which
 * get_user_pages() takes without registers, so that no event counts them (measured
 * under perf stat through the interposer: 3 to 5 faults from the note to the stop, one
 * page of strings, the kernel's count then matched to a fault or two). Without a note
 * the moment is the stop. */
#include <string.h>
#include <time.h>

#include "pecs/exec_note.h"
#include "ref/event/event.h"

/* NULL without the interposer. */
extern struct pecs_exec_board *pecs_interpose_exec_board(void) __attribute__((weak));

/* A note older than this much of its task's CPU time is another process's, whose pid
 * was reused: no exec takes that long. */
#define NOTE_MAX_NS 1000000000ull

/* The note pid left, taken off the board. */
static int take_note(pid_t pid, struct pecs_exec_note *out)
{
	struct pecs_exec_board *b = pecs_interpose_exec_board ? pecs_interpose_exec_board() : NULL;

	for (int i = 0; b && i < PECS_EXEC_NOTES; i++) {
		struct pecs_exec_note *n = &b->note[i];
		int want = (int)pid;

		if (__atomic_load_n(&n->pid, __ATOMIC_ACQUIRE) != want)
			continue;
		*out = *n;
		/* The task is stopped: nothing writes its note meanwhile. */
		return __atomic_compare_exchange_n(&n->pid, &want, 0, 0, __ATOMIC_ACQ_REL,
						   __ATOMIC_ACQUIRE)
			       ? 0
			       : -1;
	}
	return -1;
}

void ref_event_exec_moment(pid_t pid, struct ref_exec_moment *m)
{
	struct pecs_exec_note note;
	uint64_t mn, mj, now, faults;
	struct timespec ts;
	clockid_t ck;

	memset(m, 0, sizeof(*m));
	if (take_note(pid, &note) || clock_getcpuclockid(pid, &ck) || clock_gettime(ck, &ts) ||
	    ref_host_stat_field(0, pid, 10, &mn, NULL) || ref_host_stat_field(0, pid, 12, &mj, NULL))
		return;
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	faults = mn + mj;
	if (now < note.cpu_ns || now - note.cpu_ns > NOTE_MAX_NS || faults < note.faults)
		return;
	m->ns = (now - note.cpu_ns) / 2;
	faults -= note.faults;
	m->faults = faults > note.arg_pages ? faults - note.arg_pages : 0;
}
