/* The tracer behind other-process sampling, shared by event_trace.c (the thread and its
 * ptrace stops) and event_trace_sample.c (what a stop writes). Private to ref/event. */
#ifndef REF_EVENT_TRACE_H
#define REF_EVENT_TRACE_H

#include <semaphore.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct ref_event;
struct ref_event_env;

/* A mapping already told to the events, so it is told once. */
struct ref_trace_map {
	uint64_t start, end, pgoff, ino;
};

/* The mappings told for one process. */
struct ref_trace_maps {
	uint64_t last_scan;         /* when /proc/PID/maps was last read */
	struct ref_trace_map *v;
	size_t nr, cap;
};

/* A task the tracer follows: the one the events were opened on, and with inherit the
 * threads and processes it and they make. */
struct ref_trace_task {
	pid_t pid, tid;   /* as /proc names them */
	clockid_t clock;  /* its process's CPU clock, while that is its own time */
	int schedstat;    /* its time is /proc's schedstat instead: its process has others */
	int followed;     /* made by a traced task: only inherited events see it */
	int fresh;        /* its first stop is ptrace's attach stop */
	int drop;         /* made without inherit: let go at its first stop */
	int vforking;     /* waits for the task it vforked, which no stop interrupts */
	uint64_t due;     /* the CPU time its next sample is due at */
	int copy_exec;    /* a followed process executed: its CPU time and faults then */
	uint64_t at_exec_ns, at_exec_faults;
	struct ref_trace_maps maps; /* a followed process's, told with its pid */
};

struct ref_tracer {
	pid_t pid, tid;             /* the task the events were opened on */
	struct ref_event_env *env;  /* NULL once its last event left (under g_mu) */
	unsigned refs;              /* the thread's and the events' (under g_mu) */
	struct ref_tracer *next;    /* g_tracers */
	sem_t ready;                /* posted once the task is seized, or could not be */
	int seize_err;
	/* Under the engine lock: */
	struct ref_event **evs;
	size_t nr, cap;
	/* The thread's own: */
	struct ref_trace_task *tasks; /* tasks[0] the first task, until it exits */
	size_t nr_tasks, cap_tasks;
	uint64_t period;            /* ns of a task's CPU time between samples */
	int started;                /* sampling starts at the exec, or at once if enabled */
	int sampling;               /* an event samples (atomic: set by an opener) */
	/* Its events only wait for the first task's exec (enable_on_exec, remove_on_exec
	 * counters): it lets the task go there and is done (under g_mu). */
	int exec_only, done;
	int follow;                 /* exec_only: inherited copies act at their own execs */
	struct ref_trace_maps maps; /* the first task's process's */
};

uint64_t ref_trace_cpu_ns(const struct ref_trace_task *k);
/* At the stops of task k, with the engine lock held (event_trace_sample.c). */
void ref_trace_exec(struct ref_tracer *t, struct ref_trace_task *k);
void ref_trace_exit(struct ref_tracer *t, struct ref_trace_task *k);
void ref_trace_sample(struct ref_tracer *t, struct ref_trace_task *k);
/* The inherited copies the exec changes (event_exec_copy.c), at a followed process's
 * exec and exit stops. */
void ref_trace_copy_exec(struct ref_tracer *t, struct ref_trace_task *k);
void ref_trace_copy_exit(struct ref_tracer *t, struct ref_trace_task *k);
/* k made the task pid/tid. */
void ref_trace_fork(struct ref_tracer *t, const struct ref_trace_task *k, pid_t pid, pid_t tid);

/* The next stop of task k, consumed, without ever reaping it (its parent does): 1 with
 * *status, 0 when none is pending (block 0), -1 when the task is gone. Finds a stop
 * whose notification another wait of this process took, too. */
int ref_trace_next_stop(const struct ref_trace_task *k, int block, int *status);

#endif /* REF_EVENT_TRACE_H */
