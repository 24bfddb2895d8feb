/* System calls a case makes so that the implementation sees them as the kernel does:
 * the kernel sees every call of the thread, an implementation in the suite's process is
 * told of these through its task_event entry (pecs/task_event.h). And the syscalls:*
 * tracepoints' ids, which only the host's tracefs knows. */
#ifndef PECS_TOOLKIT_TASK_H
#define PECS_TOOLKIT_TASK_H

#include <stdint.h>

#include "pecs/case.h"

/* Makes system call nr with args on this thread, telling the implementation before
 * (ENTER) and after (EXIT). The call's return or -errno; -ENOSYS, with nothing called,
 * when the implementation has no task_event entry. */
long pecs_task_syscall(struct pecs_t *t, long nr, const uint64_t args[6]);

/* prctl(PR_SET_NAME, name), told likewise, with the COMM in between: 0 or -errno
 * (-ENOSYS as above). */
int pecs_task_set_name(struct pecs_t *t, const char *name);

/* The tracefs id of syscalls:<event> ("sys_enter_getppid") and, for an entry, how many
 * arguments its record carries (the format's fields from offset 16 on). 0; -ENOENT when
 * tracefs has no such event; -EACCES when no tracefs can be read. */
int pecs_tracefs_syscall(const char *event, uint64_t *id, uint32_t *nargs);
/* The same for the tracepoint <system>:<event> ("raw_syscalls", "sys_enter"); *nargs
 * counts the format's fields from offset 16 on. */
int pecs_tracefs_event(const char *system, const char *event, uint64_t *id, uint32_t *nargs);

#endif /* PECS_TOOLKIT_TASK_H */
