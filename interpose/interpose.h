/* The interposer's parts, shared by its files: the C library's own entries (real.c), which
 * fds are events (table.c), the implementation behind them (impl.c). */
#ifndef PECS_INTERPOSE_INTERNAL_H
#define PECS_INTERPOSE_INTERNAL_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "pecs/impl.h"

/* The C library's definitions of what the interposer replaces, found with
 * dlsym(RTLD_NEXT) by a constructor: pass-through calls then cost one indirect call and
 * neither lock nor allocate, so they stay safe in a signal handler. */
struct ip_real {
	long (*syscall)(long, ...);
	int (*ioctl)(int, unsigned long, ...);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	int (*close)(int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	void *(*mmap64)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*prctl)(int, ...);
	pid_t (*getsid)(pid_t);
	pid_t (*getppid)(void);
	pid_t (*getpgid)(pid_t);
	pid_t (*wait4)(pid_t, int *, int, struct rusage *);
	int (*waitid)(idtype_t, id_t, siginfo_t *, int);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*posix_spawn)(pid_t *, const char *, const void *, const void *, char *const[],
			   char *const[]);
	int (*posix_spawnp)(pid_t *, const char *, const void *, const void *, char *const[],
			    char *const[]);
};

/* Resolved before main (and on first use, for calls made by other libraries'
 * constructors that run before ours). */
const struct ip_real *ip_real(void);

/* The implementation, chosen by PECS_IMPL at the first perf_event_open. NULL for
 * "kernel"; *err is set to a positive errno when it could not be set up. */
const struct pecs_impl *ip_impl(void **ctx, int *err);

/* The environment a program executed from here gets (env.c). ip_env_opened() marks this
 * process, and the children it forked, as having opened an event. For an exec with envp,
 * ip_env_slots() is how many pointers the copy needs (1: none, envp stays), and
 * ip_env_child() returns envp or, in those slots and entry, envp without this library in its
 * LD_PRELOAD. */
#define IP_ENV_MAX_SLOTS 8192
#define IP_ENV_ENTRY_MAX 4096
void ip_env_opened(void);
/* Notes this process's CPU clock and faults in the shared page just before it executes
 * path (struct pecs_exec_note), where this process or the one it was forked from opened
 * an event. */
void ip_env_note_exec(const char *path, char *const *argv, char *const *envp);
size_t ip_env_slots(char *const *envp);
char *const *ip_env_child(char *const *envp, char **slots, size_t nslots, char *entry);

/* The fd table. An event is a slot holding the implementation's fd and a count of the
 * real fds (dup'ed copies) that name it. Lookups are lock-free atomic loads. */
#define IP_MAX_FDS 65536
#define IP_MAX_EVENTS 4096
#define IP_MAX_MAPS 1024

/* The implementation's fd behind real fd, or -1 when fd is not an event. */
int ip_table_impl_fd(int fd);
/* Makes real fd name a new event with impl_fd; -EMFILE when the table is full. */
int ip_table_add(int fd, int impl_fd);
/* Makes real fd name the same event as real fd `from` (dup). */
void ip_table_share(int fd, int from);
/* Forgets real fd; returns the implementation's fd when that was the event's last real
 * fd (the caller then closes the event), else -1. */
int ip_table_drop(int fd);
/* Calls fn on the implementation's fd of every open event. */
void ip_table_each(void (*fn)(int impl_fd, void *arg), void *arg);
/* How many events are open. */
int ip_table_count(void);
/* 1 when any of fds is an event. */
int ip_table_any(const struct pollfd *fds, nfds_t nfds);

/* Mappings the implementation made for events, so munmap finds its way back. */
int ip_map_add(void *addr, size_t len);
/* 1 and forgets it when addr starts a mapping of an event, else 0; with where the
 * implementation has it and its length (either pointer may be NULL). */
int ip_map_take(void *addr, void **impl_addr, size_t *len);
/* What [addr, addr+len) does to the events' mappings: -EINVAL when it cuts one (the
 * kernel never splits a perf mapping), 1 with one it holds whole in *start and *mlen,
 * 0 when it touches none. */
int ip_map_in(void *addr, size_t len, void **start, size_t *mlen);
/* The program's mremap moved the mapping at from to to; the implementation keeps it
 * where it mapped it. */
int ip_map_move(void *from, void *to);

/* The routed calls behind poll/ppoll: fds holds at least one event. */
int ip_poll_events(struct pollfd *fds, nfds_t nfds, int timeout_ms);

/* A system call the implementation is told of (task.c): ip_task_enter() before it,
 * ip_task_exit() after it with the C library's return (kept, with errno). */
struct ip_task_call {
	const struct pecs_impl *impl; /* NULL: nothing to report */
	void *ctx;
	long nr;
	uint64_t ip;
};
/* 1 for the calls that are reported when made through syscall(). */
int ip_task_reported(long nr);
void ip_task_enter(struct ip_task_call *c, long nr, const unsigned long args[6], void *ip);
/* Between enter and exit: the thread's name is now comm. */
void ip_task_comm(struct ip_task_call *c, const char *comm);
long ip_task_exit(struct ip_task_call *c, long r);
/* Between enter and exit: prctl(PR_TASK_PERF_EVENTS_ENABLE or _DISABLE) succeeded. 1 when
 * the implementation was told, 0 when it has no task_event entry to tell. */
int ip_task_perf_events(struct ip_task_call *c, int on);

#endif /* PECS_INTERPOSE_INTERNAL_H */
