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

struct ref_tracer {
	pid_t pid, tid;             /* the task, as /proc names it */
	struct ref_event_env *env;  /* NULL once its last event left (under g_mu) */
	unsigned refs;              /* the thread's and the events' (under g_mu) */
	struct ref_tracer *next;    /* g_tracers */
	sem_t ready;                /* posted once the task is seized, or could not be */
	int seize_err;
	/* Under the engine lock: */
	struct ref_event **evs;
	size_t nr, cap;
	/* The thread's own: */
	clockid_t clock;            /* the task's CPU clock */
	uint64_t period;            /* ns of its CPU time between samples */
	uint64_t due;               /* the CPU time the next sample is due at */
	int execed;                 /* sampling starts at the exec */
	int sampling;               /* an event samples (atomic: set by an opener) */
	uint64_t last_scan;         /* when /proc/PID/maps was last read */
	struct ref_trace_map *maps;
	size_t nr_maps, cap_maps;
};

uint64_t ref_trace_cpu_ns(const struct ref_tracer *t);
/* At the stops, with the engine lock held (event_trace_sample.c). */
void ref_trace_exec(struct ref_tracer *t);
void ref_trace_exit(struct ref_tracer *t);
void ref_trace_sample(struct ref_tracer *t);

#endif /* REF_EVENT_TRACE_H */
