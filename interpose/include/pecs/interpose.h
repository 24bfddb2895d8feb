/* The interposer: libpecs_interpose.so, loaded with LD_PRELOAD, puts an implementation of
 * perf_event_open(2) under an unmodified program (Linux's perf, a profiler, a test).
 *
 * Its interface is the C library's: the program calls syscall(SYS_perf_event_open, ...)
 * and the calls on the fds that returned, and the interposer routes them to the
 * implementation the environment names. This header holds only that vocabulary, for the
 * programs and scripts that start a program under it.
 *
 *   PECS_IMPL=ref          the reference engine (ref/), linked into the library; the default
 *   PECS_IMPL=kernel       every call passes through to the running kernel (a baseline with
 *                          the same library loaded)
 *   PECS_IMPL=/path/x.so   a plugin exporting pecs_plugin_impl() (docs/implementing.md)
 *
 * Each event is a real kernel fd (an empty epoll instance), so fd numbers, close(2), dup(2), fcntl(2)
 * and FD_CLOEXEC are the kernel's own; the interposer keeps which of those fds are events
 * and passes every call on any other fd straight through.
 */
#ifndef PECS_INTERPOSE_H
#define PECS_INTERPOSE_H

#define PECS_INTERPOSE_ENV "PECS_IMPL"
#define PECS_INTERPOSE_REF "ref"
#define PECS_INTERPOSE_KERNEL "kernel"

/* The library stays in LD_PRELOAD through wrappers (timeout, nice, sh -c), and takes
 * itself out of it only for what a process that opened an event executes (perf's
 * workload), so that runs as it would without it; "1" keeps it in for those too. */
#define PECS_INTERPOSE_CHILDREN_ENV "PECS_INTERPOSE_CHILDREN"

/* The implementation's complaints (a plugin that does not load) go to stderr once, and
 * perf_event_open then fails with this errno, as on a kernel without perf events. */
#define PECS_INTERPOSE_BROKEN_ERRNO ENOSYS

/* The exec notes the library keeps for an engine linked with it: pecs/exec_note.h. */
#include "pecs/exec_note.h"

#endif /* PECS_INTERPOSE_H */
