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

/* What a process forked from the interposer's host notes just before it executes a
 * program, for an engine in the host that counts it from outside: the moment the kernel
 * turns enable_on_exec on (perf_event_exec()) lies inside execve, which no stop of a
 * tracer reaches before the new program is loaded. Its process CPU clock and faults then,
 * and the pages execve's copy of the strings faults in the new stack (which the kernel's
 * page-faults event never counts: get_user_pages()). The notes live in the page the
 * library maps shared at load, which a fork shares and an exec does not. */
struct pecs_exec_note {
	int pid;                      /* 0: free; written last, with release order */
	int pad;
	unsigned long long cpu_ns;    /* CLOCK_PROCESS_CPUTIME_ID */
	unsigned long long faults;    /* minor and major, as getrusage(RUSAGE_SELF) */
	unsigned long long arg_pages; /* pages of the path, argv and envp strings */
};
#define PECS_EXEC_NOTES 32
struct pecs_exec_board {
	struct pecs_exec_note note[PECS_EXEC_NOTES];
};
/* The board of the library an engine is linked with; undefined (a weak reference is
 * NULL) where there is no interposer. */
struct pecs_exec_board *pecs_interpose_exec_board(void);

#endif /* PECS_INTERPOSE_H */
