/* Counter sources: each event's value is read from the kernel's own accounting of the
 * target thread (its CPU-time clock, /proc fault and switch counters), never made up. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ref/event/event.h"

enum {
	REF_SRC_ZERO,
	REF_SRC_MONOTONIC,  /* cpu-wide events: the CPU is always there to count */
	REF_SRC_THREAD_CLOCK, /* a thread of this process: its CPU-time clock */
	REF_SRC_PROCESS_CLOCK, /* another process: its CPU-time clock (all its threads) */
	REF_SRC_SCHEDSTAT,  /* a thread elsewhere: its runtime from /proc's schedstat */
	REF_SRC_MINFLT,
	REF_SRC_MAJFLT,
	REF_SRC_FLT,
	REF_SRC_CSW,
	REF_SRC_MIGRATIONS,
};

/* A task's last switch is the one out of its death (do_task_dead()), after
 * perf_event_exit_task() took its events away: /proc and the rusage count it, no event
 * does (measured: a run of /bin/true reaps with 1 voluntary switch, perf stat counts 0). */
static uint64_t without_death(uint64_t switches)
{
	return switches ? switches - 1 : 0;
}

static int status_sum(pid_t tid, const char *k1, const char *k2, uint64_t *out)
{
	char path[64], buf[4096];
	uint64_t sum = 0;
	const char *keys[2] = {k1, k2};

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (ref_host_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		char *p = strstr(buf, keys[i]);

		if (!p)
			return -1;
		sum += strtoull(p + strlen(keys[i]), NULL, 10);
	}
	/* A zombie's switches are final. */
	*out = strstr(buf, "State:\tZ") ? without_death(sum) : sum;
	return 0;
}

static int sched_migrations(pid_t tid, uint64_t *out)
{
	char path[64], buf[8192], *p;

	snprintf(path, sizeof(path), "/proc/%d/sched", (int)tid);
	if (ref_host_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "se.nr_migrations");
	if (!p || !(p = strchr(p, ':')))
		return -1;
	*out = strtoull(p + 1, NULL, 10);
	return 0;
}

/* What the task's process got from the children it waited for (proc(5) cutime and
 * cstime, cminflt, cmajflt: each exited child's counts, its own waited-for children's
 * included), in the kind's unit. */
static int children_value(const struct ref_source *s, uint64_t *v)
{
	uint64_t a = 0, b = 0;
	long hz;

	switch (s->kind) {
	case REF_SRC_PROCESS_CLOCK:
		hz = sysconf(_SC_CLK_TCK);
		if (hz <= 0 || ref_host_stat_field(0, s->tid, 16, &a, NULL) ||
		    ref_host_stat_field(0, s->tid, 17, &b, NULL))
			return -1;
		/* Each field is its nanoseconds cut to whole ticks: half a tick each puts
		 * the sum within one tick of the time, either side, instead of two below. */
		*v = (2 * (a + b) + 2) * (500000000ull / (uint64_t)hz);
		return 0;
	case REF_SRC_MINFLT:
		return ref_host_stat_field(0, s->tid, 11, v, NULL);
	case REF_SRC_MAJFLT:
		return ref_host_stat_field(0, s->tid, 13, v, NULL);
	case REF_SRC_FLT:
		if (ref_host_stat_field(0, s->tid, 11, &a, NULL) ||
		    ref_host_stat_field(0, s->tid, 13, &b, NULL))
			return -1;
		*v = a + b;
		return 0;
	}
	return -1;
}

/* The context switches of a zombie child of this process, its waited-for children's
 * included: /proc has no field for the children's (as cutime is for their time), only
 * the rusage its parent gets at the reap has them. waitid(2)'s fifth argument gives that
 * rusage (RUSAGE_BOTH) and WNOWAIT leaves the zombie to be reaped. */
static int zombie_switches(pid_t pid, uint64_t *v)
{
	struct rusage ru;
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (pid <= 0 ||
	    syscall(SYS_waitid, P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL, &ru) ||
	    si.si_pid != pid)
		return -1;
	*v = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
	return 0;
}

/* The runtime the threads made before the open have now: a thread that exited keeps
 * its last reading (its time stays in the process clock). */
static uint64_t before_ns(struct ref_source *s)
{
	uint64_t sum = 0, ns;

	for (size_t i = 0; i < s->nr_before; i++) {
		if (ref_host_schedstat_ns(s->tid, s->before[i].tid, &ns) == 0)
			s->before[i].ns = ns;
		sum += s->before[i].ns;
	}
	return sum;
}

/* Lists the threads of s->tid's process other than itself. 0, or -1 without memory. */
static int list_before(struct ref_source *s)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)s->tid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		struct ref_source_thread *n;

		if (tid <= 0 || tid == s->tid)
			continue;
		n = realloc(s->before, (s->nr_before + 1) * sizeof(*n));
		if (!n) {
			closedir(d);
			return -1;
		}
		s->before = n;
		s->before[s->nr_before].tid = tid;
		s->before[s->nr_before].ns = 0;
		s->nr_before++;
	}
	closedir(d);
	before_ns(s);
	return 0;
}

void ref_event_source_fini(struct ref_source *s)
{
	free(s->before);
	s->before = NULL;
	s->nr_before = 0;
}

static int own_sample(struct ref_source *s, uint64_t *v);

/* Linux adds an inherited event's counts to the parent event when the child exits
 * (perf_event_exit_task()); user space sees a child's counts once its parent waited
 * for it, exact for faults and to a clock tick for the CPU time. A child's context
 * switches show only once the task itself exited, if it is this process's child (perf
 * stat's is): zombie_switches(). */
static int source_sample(struct ref_source *s, uint64_t *v)
{
	uint64_t c;

	if (own_sample(s, v))
		return -1;
	if (s->children && s->kind == REF_SRC_CSW) {
		if (zombie_switches(s->ns_tid, &c) == 0 && without_death(c) > *v)
			*v = without_death(c);
	} else if (s->children && children_value(s, &c) == 0) {
		/* child_base grows when a remove_on_exec copy's process exits, before its
		 * parent waits for it and its counts join c (event_exec_copy.c). */
		uint64_t add = c > s->child_base ? c - s->child_base : 0;

		if (add < s->child_seen)
			add = s->child_seen;
		s->child_seen = add;
		*v += add;
	}
	return 0;
}

static int own_sample(struct ref_source *s, uint64_t *v)
{
	struct timespec ts;

	switch (s->kind) {
	case REF_SRC_ZERO:
		*v = 0;
		return 0;
	case REF_SRC_MONOTONIC:
	case REF_SRC_THREAD_CLOCK:
	case REF_SRC_PROCESS_CLOCK:
		if (clock_gettime(s->kind == REF_SRC_MONOTONIC ? CLOCK_MONOTONIC : s->clock, &ts))
			return -1;
		*v = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (s->nr_before) {
			uint64_t off = before_ns(s);

			*v = *v > off ? *v - off : 0;
		}
		return 0;
	case REF_SRC_SCHEDSTAT:
		return ref_host_schedstat_ns(0, s->tid, v) ? -1 : 0;
	case REF_SRC_MINFLT:
		return ref_host_stat_field(0, s->tid, 10, v, NULL);
	case REF_SRC_MAJFLT:
		return ref_host_stat_field(0, s->tid, 12, v, NULL);
	case REF_SRC_FLT: {
		uint64_t mn, mj;

		if (ref_host_stat_field(0, s->tid, 10, &mn, NULL) ||
		    ref_host_stat_field(0, s->tid, 12, &mj, NULL))
			return -1;
		*v = mn + mj;
		return 0;
	}
	case REF_SRC_CSW:
		return status_sum(s->tid, "voluntary_ctxt_switches:",
				  "nonvoluntary_ctxt_switches:", v);
	case REF_SRC_MIGRATIONS:
		return sched_migrations(s->tid, v);
	}
	return -1;
}

uint64_t ref_event_source_read(struct ref_source *s)
{
	uint64_t v;

	/* A finished thread's counters stop where they were, as its events do on Linux.
	 * The earlier threads' runtime is read apart from the process clock, a moment
	 * later: the difference may step back by that moment, which a count never does. */
	if (source_sample(s, &v) == 0 && (!s->nr_before || v >= s->last))
		s->last = v;
	return s->last;
}

int ref_event_source_init(struct ref_source *s, enum ref_kind kind, const struct pecs_attr *a,
			  pid_t tid, pid_t proc_tid, int same_process, int for_time)
{
	int task_clock = REF_SRC_THREAD_CLOCK;
	/* Linux raises these from scheduler code with kernel registers, so an event that
	 * excludes the kernel never sees one (measured: 0 with exclude_kernel=1). */
	int sched_visible = !(a->flags & PECS_ATTR_EXCLUDE_KERNEL);

	memset(s, 0, sizeof(*s));
	s->clock = ref_event_thread_clock(tid);
	s->tid = tid < 0 ? -1 : proc_tid;
	s->ns_tid = tid;
	if (tid >= 0 && !same_process) {
		/* Linux counts only the named thread; a process clock equals that for a
		 * single-threaded process, /proc's schedstat is exact for any thread. */
		task_clock = REF_SRC_SCHEDSTAT;
		/* With inherit Linux counts the threads the task makes too: the process
		 * clock covers every thread, the exited ones included (a process that is
		 * not a thread group leader has none, and keeps its schedstat). Child
		 * processes count once waited for (children_value()). */
		if (s->tid < 0 || (a->flags & PECS_ATTR_INHERIT)) {
			if (clock_getcpuclockid(tid, &s->clock) == 0)
				task_clock = REF_SRC_PROCESS_CLOCK;
			else if (s->tid < 0)
				return -ESRCH;
		}
	}
	if (tid < 0) {
		/* cpu-wide: the only counters open for it are the clocks */
		s->kind = (for_time || ref_kind_is_clock(kind)) ? REF_SRC_MONOTONIC : REF_SRC_ZERO;
	} else if (for_time) {
		/* A task's times advance only while it runs: its context is scheduled
		 * out otherwise (measured: time_enabled == task clock). */
		s->kind = task_clock;
	} else {
		switch (kind) {
		case REF_KIND_CPU_CLOCK:
		case REF_KIND_TASK_CLOCK:
			s->kind = task_clock;
			break;
		case REF_KIND_PAGE_FAULTS:
			s->kind = REF_SRC_FLT;
			break;
		case REF_KIND_PAGE_FAULTS_MIN:
			s->kind = REF_SRC_MINFLT;
			break;
		case REF_KIND_PAGE_FAULTS_MAJ:
			s->kind = REF_SRC_MAJFLT;
			break;
		case REF_KIND_CONTEXT_SWITCHES:
			s->kind = sched_visible ? REF_SRC_CSW : REF_SRC_ZERO;
			break;
		case REF_KIND_CPU_MIGRATIONS:
			s->kind = sched_visible ? REF_SRC_MIGRATIONS : REF_SRC_ZERO;
			break;
		case REF_KIND_ZERO:
		case REF_KIND_SYSCALL_TP: /* counted as told (event_tracepoint.c) */
			s->kind = REF_SRC_ZERO;
			break;
		}
	}
	/* The threads made before the open are not the event's (perf_event_init_task()
	 * copies it only into tasks cloned after). Without /proc they cannot be told apart,
	 * and the process clock counts them too. */
	if (s->kind == REF_SRC_PROCESS_CLOCK && s->tid > 0 && list_before(s))
		return -ENOMEM;
	/* With inherit, the children of another process count too (perf stat -- sh -c). The
	 * switches of the children it waited for before the open cannot be told apart from
	 * the later ones: a fresh fork, as perf stat's, has none. */
	if ((a->flags & PECS_ATTR_INHERIT) && tid >= 0 && !same_process && s->tid > 0 &&
	    (s->kind == REF_SRC_CSW || children_value(s, &s->child_base) == 0))
		s->children = 1;
	if (source_sample(s, &s->last))
		return -ESRCH;
	return 0;
}

/* Linux counts a task event bound to a CPU only while the task runs there. User space
 * cannot see where a task ran between two syncs: its affinity decides exactly when it
 * leaves that CPU out (never counts) or names that CPU alone (counts whenever the task
 * runs); otherwise the CPU the task is on now stands for the whole interval. */
int ref_event_source_on_cpu(pid_t tid, int cpu)
{
	cpu_set_t set;
	uint64_t now;

	if (tid < 0 || cpu < 0)
		return 1;
	if (sched_getaffinity(tid, sizeof(set), &set) == 0) {
		if (!CPU_ISSET(cpu, &set))
			return 0;
		if (CPU_COUNT(&set) == 1)
			return 1;
	}
	if (tid == gettid())
		return sched_getcpu() == cpu;
	/* proc(5): field 39 is the CPU the task last ran on. */
	if (ref_host_stat_field(0, tid, 39, &now, NULL) == 0)
		return now == (uint64_t)cpu;
	return 1;
}

int ref_event_source_unit(const struct ref_source *s)
{
	switch (s->kind) {
	case REF_SRC_THREAD_CLOCK:
	case REF_SRC_PROCESS_CLOCK:
	case REF_SRC_SCHEDSTAT:
		return REF_UNIT_NS;
	case REF_SRC_MINFLT:
	case REF_SRC_FLT:
		return REF_UNIT_FAULTS;
	}
	return 0;
}
