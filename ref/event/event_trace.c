/* Sampling another process from outside: a tracer thread per task follows it with
 * ptrace (PTRACE_SEIZE, then PTRACE_INTERRUPT each time the task's CPU clock passes a
 * period), reads its registers and walks its frame pointers in its memory, and writes
 * the samples and the side-band records (COMM at the exec, MMAP2 for its executable
 * mappings, EXIT) to the events on it.
 *
 * Why ptrace from a thread of this process: the events' rings live here, the task is
 * normally this process's child (perf record forks it), so no ptrace policy stands in
 * the way, and a thread of the real parent never changes who reaps the child. The
 * clock timer of a cpu-clock event needs the task stopped where it runs: the stop is
 * the timer interrupt, and the frame-pointer walk is the one perf_callchain_user()
 * does, so the chains are the kernel's.
 *
 * What it costs the traced program: one stop per sample (two context switches and
 * the register read); see docs/ref-engine-notes.md "Other-process sampling".
 *
 * A ptrace stop sends SIGCHLD to the tracer's process unless its handler has
 * SA_NOCLDSTOP (do_notify_parent_cldstop()). perf record ends on any SIGCHLD, so the
 * tracer adds SA_NOCLDSTOP to the program's SIGCHLD action while it traces: the
 * program then misses job-control stops of its children, which it was not asking for
 * while it profiles one. */
#define _GNU_SOURCE
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ref/event/event.h"
#include "ref/event/event_trace.h"

/* Guards every tracer's env pointer and the list; taken after an engine lock, never
 * the other way (the thread only trylocks an engine's lock while holding it). */
#define SIDEBAND_FLAGS                                                                  \
	(PECS_ATTR_COMM | PECS_ATTR_MMAP | PECS_ATTR_MMAP2 | PECS_ATTR_MMAP_DATA | PECS_ATTR_TASK)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ref_tracer *g_tracers;
static int g_nocldstop; /* tracers that added SA_NOCLDSTOP */

uint64_t ref_trace_cpu_ns(const struct ref_tracer *t)
{
	struct timespec ts;

	if (clock_gettime(t->clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void set_nocldstop(int on)
{
	struct sigaction sa;

	pthread_mutex_lock(&g_mu);
	if ((on ? g_nocldstop++ : --g_nocldstop) == 0 && !sigaction(SIGCHLD, NULL, &sa)) {
		/* Only a handler needs it: SIG_DFL and SIG_IGN run nothing. */
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
			if (on)
				sa.sa_flags |= SA_NOCLDSTOP;
			else
				sa.sa_flags &= ~SA_NOCLDSTOP;
			sigaction(SIGCHLD, &sa, NULL);
		}
	}
	pthread_mutex_unlock(&g_mu);
}

/* Takes the engine lock of a tracer that still has events; NULL once it has none. */
static struct ref_event_env *lock_env(struct ref_tracer *t)
{
	for (;;) {
		struct ref_event_env *env;

		pthread_mutex_lock(&g_mu);
		env = t->env;
		if (!env || !pthread_mutex_trylock(&env->lock)) {
			pthread_mutex_unlock(&g_mu);
			return env;
		}
		pthread_mutex_unlock(&g_mu);
		usleep(50);
	}
}

/* The tracer's end: whoever comes second (the thread, or the last event's removal)
 * frees it. */
static void tracer_put(struct ref_tracer *t)
{
	int last;

	pthread_mutex_lock(&g_mu);
	last = --t->refs == 0;
	pthread_mutex_unlock(&g_mu);
	if (last) {
		free(t->evs);
		free(t->maps);
		free(t);
	}
}

/* Stops the task, if it still runs, and lets it go. */
static void detach(struct ref_tracer *t)
{
	siginfo_t si;
	int status;

	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0))
		return;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)t->tid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT))
			return;
		if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
			return; /* gone: its parent reaps it */
		if (waitpid(t->tid, &status, __WALL | WNOHANG) != t->tid)
			return;
		if (status >> 16 == PTRACE_EVENT_STOP || status >> 16 == PTRACE_EVENT_EXIT) {
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
			return;
		}
		/* A signal on its way: it goes with the detach. */
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)WSTOPSIG(status));
		return;
	}
}

static int due(struct ref_tracer *t)
{
	return t->execed && __atomic_load_n(&t->sampling, __ATOMIC_RELAXED) &&
	       ref_trace_cpu_ns(t) >= t->due;
}

/* What one stop means; 1 when the tracer is done with the task. */
static int on_stop(struct ref_tracer *t, int status)
{
	int event = status >> 16, sig = WSTOPSIG(status);
	struct ref_event_env *env;


	if (event == PTRACE_EVENT_EXEC || event == PTRACE_EVENT_EXIT ||
	    (event == PTRACE_EVENT_STOP && sig == SIGTRAP)) {
		env = lock_env(t);
		if (env) {
			if (event == PTRACE_EVENT_EXEC)
				ref_trace_exec(t);
			else if (event == PTRACE_EVENT_EXIT)
				ref_trace_exit(t);
			else if (due(t))
				ref_trace_sample(t);
			pthread_mutex_unlock(&env->lock);
		}
		if (event == PTRACE_EVENT_EXIT || !env) {
			ptrace(PTRACE_DETACH, t->tid, 0, 0);
			return 1;
		}
		ptrace(PTRACE_CONT, t->tid, 0, 0);
		return 0;
	}
	if (event == PTRACE_EVENT_STOP) {
		/* A group stop (SIGSTOP and the like): it stays stopped, as without us. */
		ptrace(PTRACE_LISTEN, t->tid, 0, 0);
		return 0;
	}
	/* A signal-delivery stop: the signal goes on to the task. */
	ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)sig);
	return 0;
}

/* The next stop, consumed, without ever reaping the task (its parent does):
 * 1 with *status, 0 when none is pending (block 0), -1 when the task is gone. */
static int next_stop(struct ref_tracer *t, int block, int *status)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)t->tid, &si,
		   WEXITED | WSTOPPED | __WALL | WNOWAIT | (block ? 0 : WNOHANG)))
		return errno == EINTR ? 0 : -1;
	if (!si.si_pid)
		return 0;
	if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
		return -1;
	return waitpid(t->tid, status, __WALL | WNOHANG) == t->tid ? 1 : 0;
}

static int still_wanted(struct ref_tracer *t)
{
	int wanted;

	pthread_mutex_lock(&g_mu);
	wanted = t->env != NULL;
	pthread_mutex_unlock(&g_mu);
	return wanted;
}

/* Wall time to wait before the task can have used up its period: its CPU time grows
 * no faster than the wall clock. At most 1 ms, to notice a removal or a stop. */
static void wait_a_while(struct ref_tracer *t)
{
	uint64_t now = t->execed ? ref_trace_cpu_ns(t) : 0, ns = 1000000;
	struct timespec ts;

	if (t->execed && t->due > now && t->due - now < ns)
		ns = t->due - now;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ns;
	nanosleep(&ts, NULL);
}

static void trace_loop(struct ref_tracer *t)
{
	int status, r;

	for (;;) {
		if (!still_wanted(t)) {
			detach(t);
			return;
		}
		r = next_stop(t, 0, &status);
		if (r < 0)
			return;
		if (r > 0) {
			if (on_stop(t, status))
				return;
			continue;
		}
		if (due(t)) {
			if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0))
				return;
			r = next_stop(t, 1, &status);
			if (r < 0)
				return;
			if (r > 0 && on_stop(t, status))
				return;
			continue;
		}
		wait_a_while(t);
	}
}

static void *tracer_main(void *arg)
{
	struct ref_tracer *t = arg;

	t->seize_err = ptrace(PTRACE_SEIZE, t->tid, 0,
			      (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)) ? errno : 0;
	if (!t->seize_err)
		set_nocldstop(1);
	sem_post(&t->ready);
	if (!t->seize_err) {
		trace_loop(t);
		set_nocldstop(0);
	}
	tracer_put(t);
	return NULL;
}

static struct ref_tracer *tracer_new(struct ref_event *ev)
{
	struct ref_tracer *t = calloc(1, sizeof(*t));
	pthread_attr_t pa;
	pthread_t th;
	int err;

	if (!t)
		return NULL;
	t->pid = ev->proc_id;
	t->tid = ev->proc_id;
	t->env = ev->env;
	t->period = ev->period ? ev->period : 1;
	/* A thread's CPU clock is readable only within its own process; the process
	 * clock of a single-threaded task is its thread's. */
	if (clock_getcpuclockid(t->pid, &t->clock)) {
		free(t);
		return NULL;
	}
	t->refs = 2; /* the thread's, and the events' */
	sem_init(&t->ready, 0, 0);
	pthread_attr_init(&pa);
	pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&th, &pa, tracer_main, t);
	pthread_attr_destroy(&pa);
	if (err) {
		free(t);
		return NULL;
	}
	/* perf writes the word that lets its child exec once open returns: the task must
	 * be seized by then, or its exec goes unseen. */
	while (sem_wait(&t->ready) && errno == EINTR)
		;
	sem_destroy(&t->ready);
	return t;
}

void ref_event_trace_add(struct ref_event *ev)
{
	struct ref_tracer *t;
	struct ref_event **n;

	int sampling = ref_attr_is_sampling(&ev->attr);

	/* A counter that asks for side-band records (perf's dummy event) needs the exec,
	 * the mappings and the exit seen as much as a sampler does. */
	if ((!sampling && !(ev->attr.flags & SIDEBAND_FLAGS)) || ev->proc_id <= 0 ||
	    ev->tid != ev->proc_id)
		return;
	pthread_mutex_lock(&g_mu);
	for (t = g_tracers; t; t = t->next)
		if (t->env == ev->env && t->tid == ev->proc_id)
			break;
	pthread_mutex_unlock(&g_mu);
	if (!t) {
		t = tracer_new(ev);
		if (!t)
			return;
		pthread_mutex_lock(&g_mu);
		t->next = g_tracers;
		g_tracers = t;
		pthread_mutex_unlock(&g_mu);
	}
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4;

		n = realloc(t->evs, cap * sizeof(*n));
		if (!n)
			return;
		t->evs = n;
		t->cap = cap;
	}
	t->evs[t->nr++] = ev;
	ev->tracer = t;
	if (sampling)
		__atomic_store_n(&t->sampling, 1, __ATOMIC_RELAXED);
}

void ref_event_trace_remove(struct ref_event *ev)
{
	struct ref_tracer *t = ev->tracer, **p;
	size_t i;

	if (!t)
		return;
	ev->tracer = NULL;
	for (i = 0; i < t->nr && t->evs[i] != ev; i++)
		;
	if (i < t->nr)
		t->evs[i] = t->evs[--t->nr];
	if (t->nr)
		return;
	pthread_mutex_lock(&g_mu);
	t->env = NULL;
	for (p = &g_tracers; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	pthread_mutex_unlock(&g_mu);
	tracer_put(t);
}
