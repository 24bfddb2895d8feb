/* Something the calling thread did that an implementation living in the caller's own
 * process cannot see by itself: entering or leaving a system call, taking a new name,
 * switching its own events off or on with prctl.
 * On Linux the kernel sees these directly; an in-process implementation (ref under the
 * interposer, or a case's toolkit call) is told of them, so that its syscalls:*
 * tracepoints and its PERF_RECORD_COMM records fire where the kernel's do.
 *
 * Size-versioned like the other pecs structs: `size` is sizeof as the caller built it.
 */
#ifndef PECS_TASK_EVENT_H
#define PECS_TASK_EVENT_H

#include <stddef.h>
#include <stdint.h>

#define PECS_TASK_SYSCALL_ENTER 1 /* before the call: nr and args */
#define PECS_TASK_SYSCALL_EXIT 2  /* after it: nr and ret */
#define PECS_TASK_COMM 3          /* the thread's name is now comm (prctl PR_SET_NAME) */
/* prctl(PR_TASK_PERF_EVENTS_DISABLE / _ENABLE) returned 0: every event the calling thread
 * created stops / starts, wherever it counts */
#define PECS_TASK_PERF_EVENTS_DISABLE 4
#define PECS_TASK_PERF_EVENTS_ENABLE 5

struct pecs_task_event {
	size_t size;
	uint32_t what;      /* PECS_TASK_* */
	int32_t nr;         /* the system call's number, as <sys/syscall.h> has it */
	uint64_t args[6];   /* ENTER: its arguments, unused ones 0 */
	int64_t ret;        /* EXIT: its return value, -errno on failure */
	uint64_t ip;        /* the user address the call was made from; 0 unknown */
	const char *comm;   /* COMM: the new name, NUL-terminated */
};

#endif /* PECS_TASK_EVENT_H */
