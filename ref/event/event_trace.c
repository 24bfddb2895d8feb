/* Sampling another process from outside: a tracer thread per task follows it with
 * ptrace (PTRACE_SEIZE, then PTRACE_INTERRUPT each time the task's CPU clock passes a
 * period), reads its registers and walks its frame pointers in its memory, and writes
 * the samples and the side-band records (COMM at the exec, MMAP2 for its executable
 * mappings, EXIT) to the events on it. The tasks it makes are attached as they are made
 * (PTRACE_O_TRACECLONE, TRACEFORK, TRACEVFORK): each gets its FORK record and, when an
 * event inherits, is followed the same way, its records going to the inherit events.
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
#include <stdio.h>
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

/* A process and the processes it forks, to their execs. */
#define FOLLOW_OPTIONS                                                                  \
	(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ref_tracer *g_tracers;
static int g_nocldstop; /* tracers that added SA_NOCLDSTOP */

uint64_t ref_trace_cpu_ns(const struct ref_trace_task *k)
{
	struct timespec ts;
	uint64_t ns;

	if (k->schedstat)
		return ref_host_schedstat_ns(k->pid, k->tid, &ns) ? 0 : ns;
	if (clock_gettime(k->clock, &ts))
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
		free(t->maps.v);
		for (size_t i = 0; i < t->nr_tasks; i++)
			free(t->tasks[i].maps.v);
		free(t->tasks);
		free(t);
	}
}

/* Stops the task, if it still runs, and lets it go. */
static void detach(const struct ref_trace_task *k)
{
	siginfo_t si;
	int status;

	if (ptrace(PTRACE_INTERRUPT, k->tid, 0, 0))
		return;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)k->tid, &si, WEXITED | WSTOPPED | __WALL | WNOWAIT))
			return;
		if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
			return; /* gone: its parent reaps it */
		if (waitpid(k->tid, &status, __WALL | WNOHANG) != k->tid)
			return;
		if (status >> 16 == PTRACE_EVENT_STOP || status >> 16 == PTRACE_EVENT_EXIT) {
			ptrace(PTRACE_DETACH, k->tid, 0, 0);
			return;
		}
		/* A signal on its way: it goes with the detach. */
		ptrace(PTRACE_DETACH, k->tid, 0, (void *)(long)WSTOPSIG(status));
		return;
	}
}

/* A counter on the task that only waits for its exec. */
static int exec_only(const struct ref_event *ev)
{
	return (ev->exec.armed || ev->exec.remove) && !ref_attr_is_sampling(&ev->attr) &&
	       !(ev->attr.flags & SIDEBAND_FLAGS);
}

static int due(const struct ref_tracer *t, const struct ref_trace_task *k)
{
	return t->started && !k->drop && !k->vforking &&
	       __atomic_load_n(&t->sampling, __ATOMIC_RELAXED) &&
	       ref_trace_cpu_ns(k) >= k->due;
}

/* 1 when /proc shows the process with one thread, or cannot say (then the process
 * clock, which the schedstat of an unreadable /proc could not replace, stays). */
static int single_threaded(pid_t pid)
{
	uint64_t n;

	/* proc(5): field 20 is num_threads. */
	return ref_host_stat_field(0, pid, 20, &n, NULL) != 0 || n == 1;
}

/* Follows pid/tid from now on; -1 when there is no room for it. */
static int task_add(struct ref_tracer *t, pid_t pid, pid_t tid, int followed, int drop)
{
	struct ref_trace_task *k;

	if (t->nr_tasks == t->cap_tasks) {
		size_t cap = t->cap_tasks ? 2 * t->cap_tasks : 4;

		k = realloc(t->tasks, cap * sizeof(*k));
		if (!k)
			return -1;
		t->tasks = k;
		t->cap_tasks = cap;
	}
	k = &t->tasks[t->nr_tasks++];
	memset(k, 0, sizeof(*k));
	k->pid = pid;
	k->tid = tid;
	k->followed = k->fresh = followed;
	k->drop = drop;
	/* A process clock is a leader's own time only while it has no other thread: a
	 * leader attached beside threads it made earlier (its event opened after them) is
	 * sampled on its own runtime, as the kernel's timer follows that thread alone. */
	k->schedstat = pid != tid || !single_threaded(pid) ||
		       clock_getcpuclockid(pid, &k->clock) != 0;
	k->due = ref_trace_cpu_ns(k) + t->period;
	return 0;
}

static int in_process(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/* Task i made tid (ptrace attached it: PTRACE_O_TRACECLONE and the like). Its FORK goes
 * to task i's events; with inherit it is followed as the kernel's copies of the events
 * would follow it, else let go at its first stop. */
static void on_new_task(struct ref_tracer *t, size_t i, pid_t tid)
{
	pid_t pid = in_process(t->tasks[i].pid, tid) ? t->tasks[i].pid : tid;
	struct ref_event_env *env = lock_env(t);
	int inherit = 0, status;

	if (env) {
		ref_trace_fork(t, &t->tasks[i], pid, tid);
		for (size_t e = 0; e < t->nr; e++)
			inherit |= (t->evs[e]->attr.flags & PECS_ATTR_INHERIT) != 0;
		pthread_mutex_unlock(&env->lock);
	}
	if (task_add(t, pid, tid, 1, !inherit)) {
		/* No room to follow it: it must not stay stopped at its attach stop. */
		if (waitpid(tid, &status, __WALL) == tid)
			ptrace(PTRACE_DETACH, tid, 0, 0);
		return;
	}
	if (!inherit || pid == tid)
		return;
	/* Its process now has two threads: each counts its own time. */
	for (size_t j = 0; j < t->nr_tasks; j++)
		if (t->tasks[j].pid == pid && !t->tasks[j].schedstat) {
			t->tasks[j].schedstat = 1;
			t->tasks[j].due = ref_trace_cpu_ns(&t->tasks[j]) + t->period;
		}
}

static int is_new_task(int event)
{
	return event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
	       event == PTRACE_EVENT_VFORK;
}

/* An exec-only tracer is done at its task's exec, unless an event that needs the task
 * followed has joined it since (under the engine lock, as the joiner). */
static int exec_done(struct ref_tracer *t, const struct ref_trace_task *k, int event)
{
	int done;

	if (event != PTRACE_EVENT_EXEC || k->followed)
		return 0;
	pthread_mutex_lock(&g_mu);
	done = t->done = t->exec_only;
	pthread_mutex_unlock(&g_mu);
	return done;
}

/* What one stop of task i means; 1 when the tracer is done with the task. */
static int on_stop(struct ref_tracer *t, size_t i, int status)
{
	int event = status >> 16, sig = WSTOPSIG(status);
	struct ref_trace_task *k = &t->tasks[i];
	pid_t tid = k->tid;
	struct ref_event_env *env;
	unsigned long msg = 0;

	if (k->fresh && event == PTRACE_EVENT_STOP) {
		/* ptrace's stop of a task it attached when its maker made it. */
		k->fresh = 0;
		if (k->drop) {
			ptrace(PTRACE_DETACH, tid, 0, 0);
			return 1;
		}
		/* A process followed for its copies: its exit ends what they count. */
		if (t->exec_only)
			ptrace(PTRACE_SETOPTIONS, tid, 0, (void *)(FOLLOW_OPTIONS | PTRACE_O_TRACEEXIT));
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	}
	if (is_new_task(event)) {
		if (!ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) && msg)
			on_new_task(t, i, (pid_t)msg); /* t->tasks may move */
		/* Until the vforked task executes or exits, the maker sleeps where an
		 * interrupt does not reach it: a wait for its stop would wait for a task
		 * that may be held at its own attach stop by this very thread. */
		t->tasks[i].vforking = event == PTRACE_EVENT_VFORK;
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	}
	if (event == PTRACE_EVENT_VFORK_DONE) {
		k->vforking = 0;
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	}
	if (event == PTRACE_EVENT_EXEC || event == PTRACE_EVENT_EXIT ||
	    (event == PTRACE_EVENT_STOP && sig == SIGTRAP)) {
		/* A ptrace request waits until the task is off its CPU (wait_task_inactive()):
		 * the switch of this stop is then in its counts, and not after the exec. */
		if (event == PTRACE_EVENT_EXEC)
			ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg);
		env = lock_env(t);
		if (env) {
			if (event == PTRACE_EVENT_EXEC)
				ref_trace_exec(t, k);
			else if (event == PTRACE_EVENT_EXIT)
				ref_trace_exit(t, k);
			else if (due(t, k))
				ref_trace_sample(t, k);
			pthread_mutex_unlock(&env->lock);
		}
		if (event == PTRACE_EVENT_EXIT || !env || exec_done(t, k, event)) {
			ptrace(PTRACE_DETACH, tid, 0, 0);
			return 1;
		}
		ptrace(PTRACE_CONT, tid, 0, 0);
		return 0;
	}
	if (event == PTRACE_EVENT_STOP) {
		/* A group stop (SIGSTOP and the like): it stays stopped, as without us. */
		ptrace(PTRACE_LISTEN, tid, 0, 0);
		return 0;
	}
	/* A signal-delivery stop: the signal goes on to the task. */
	ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
	return 0;
}

static int still_wanted(struct ref_tracer *t)
{
	int wanted;

	pthread_mutex_lock(&g_mu);
	wanted = t->env != NULL;
	pthread_mutex_unlock(&g_mu);
	return wanted;
}

/* Wall time to wait before a task can have used up its period: its CPU time grows
 * no faster than the wall clock. At most 1 ms, to notice a removal or a stop. */
static void wait_a_while(const struct ref_tracer *t)
{
	uint64_t ns = 1000000;
	struct timespec ts;

	for (size_t i = 0; t->started && i < t->nr_tasks; i++) {
		uint64_t now = ref_trace_cpu_ns(&t->tasks[i]);

		if (t->tasks[i].due > now && t->tasks[i].due - now < ns)
			ns = t->tasks[i].due - now;
	}
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ns;
	nanosleep(&ts, NULL);
}

/* Task i is no longer followed. A followed task is not this process's child: its exit
 * is told to the tracer first, and is taken here so that its parent hears of it. */
static void task_gone(struct ref_tracer *t, size_t i, int exited)
{
	int status;

	if (exited && t->tasks[i].followed)
		waitpid(t->tasks[i].tid, &status, __WALL | WNOHANG);
	free(t->tasks[i].maps.v);
	t->tasks[i] = t->tasks[--t->nr_tasks];
}

/* One look at task i: its pending stop, or the sample due. -1 when it is gone, 1 when
 * it stopped, 0 when it ran on. */
static int visit(struct ref_tracer *t, size_t i)
{
	int status, r = ref_trace_next_stop(&t->tasks[i], 0, &status);

	if (r == 0 && due(t, &t->tasks[i]))
		r = ptrace(PTRACE_INTERRUPT, t->tasks[i].tid, 0, 0)
			    ? -1
			    : ref_trace_next_stop(&t->tasks[i], 1, &status);
	if (r < 0) {
		task_gone(t, i, 1);
		return -1;
	}
	if (r > 0 && on_stop(t, i, status)) {
		task_gone(t, i, 0);
		return -1;
	}
	return r;
}

static void trace_loop(struct ref_tracer *t)
{
	while (t->nr_tasks) {
		int busy = 0;

		if (!still_wanted(t)) {
			/* The tasks held at their attach stop first: a vfork's maker waits
			 * for its task, and so would its detach. */
			for (int fresh = 1; fresh >= 0; fresh--)
				for (size_t i = 0; i < t->nr_tasks; i++)
					if (t->tasks[i].fresh == fresh)
						detach(&t->tasks[i]);
			return;
		}
		for (size_t i = 0; i < t->nr_tasks;) {
			int r = visit(t, i);

			busy |= r != 0;
			if (r >= 0)
				i++;
		}
		if (!busy)
			wait_a_while(t);
	}
}

static void *tracer_main(void *arg)
{
	struct ref_tracer *t = arg;

	/* Every new task is attached, to write its FORK; with inherit it is followed. */
	long all = PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE | FOLLOW_OPTIONS;
	/* Waiting for the exec only, it stops the task there alone (an exit stop would be
	 * a context switch its counters see), and where the event's copies act at an exec,
	 * at the forks that make them. */
	long exec = t->follow ? FOLLOW_OPTIONS : PTRACE_O_TRACEEXEC;

	t->seize_err = ptrace(PTRACE_SEIZE, t->tid, 0, (void *)(t->exec_only ? exec : all))
			       ? errno
			       : 0;
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
	/* An event that waits for the exec starts sampling there, any other at once. */
	t->started = !ev->exec.armed;
	t->exec_only = exec_only(ev);
	t->follow = (ev->attr.flags & PECS_ATTR_INHERIT) && (ev->exec.armed || ev->exec.remove);
	if (task_add(t, t->pid, t->tid, 0, 0)) {
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
		free(t->tasks);
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
	 * the mappings and the exit seen as much as a sampler does; one the exec turns on
	 * or off needs the exec's moment. */
	if ((!sampling && !(ev->attr.flags & SIDEBAND_FLAGS) && !exec_only(ev)) ||
	    ev->proc_id <= 0 || ev->tid != ev->proc_id)
		return;
	pthread_mutex_lock(&g_mu);
	for (t = g_tracers; t; t = t->next)
		if (t->env == ev->env && t->tid == ev->proc_id && !t->done)
			break;
	/* Joined by an event that needs more than the exec, it follows the task on. */
	if (t && !exec_only(ev))
		t->exec_only = 0;
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
	ev->exec.traced = !t->seize_err;
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
