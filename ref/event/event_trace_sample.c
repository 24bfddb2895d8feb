/* What the tracer writes at a stop of a task it follows (event_trace.c has the thread):
 * the exec's COMM and mappings, a sample with its frame-pointer callchain, the FORK of a
 * task it made, the EXIT. Every
 * function here runs on the tracer thread with the engine lock held and the task
 * stopped, so its registers, memory, maps and last cpu hold still while they are read. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include "ref/event/event.h"
#include "ref/event/event_trace.h"
#include "ref/event/event_trace_regs.h"

/* sysctl kernel.perf_event_max_stack's default: the kernel's walk stops there too. */
#define MAX_FRAMES 127u
#define RESCAN_NS 1000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The trailer's facts: the task, now, and the cpu it last ran on. */
static void source(const struct ref_trace_task *k, struct pecs_sample *s)
{
	uint64_t cpu = 0;

	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->pid = (uint32_t)k->pid;
	s->tid = (uint32_t)k->tid;
	if (ref_host_stat_field(k->pid, k->tid, 39, &cpu, NULL) == 0)
		s->cpu = (uint32_t)cpu;
	s->time = mono_ns();
}

/* perf_iterate_ctx(): records go to the events in the task's context that can count on
 * the cpu it is on; a task the tracer followed has only the inherited ones
 * (perf_event_init_task() copies those alone). */
static int on_cpu(const struct ref_event *ev, const struct ref_trace_task *k,
		  const struct pecs_sample *s)
{
	return (ev->cpu < 0 || (uint32_t)ev->cpu == s->cpu) &&
	       (!k->followed || (ev->attr.flags & PECS_ATTR_INHERIT));
}

static int own_process(const struct ref_tracer *t, const struct ref_trace_task *k)
{
	return k->pid == t->pid;
}

/* The mappings told for k's process: the first task's, else its leader's while the
 * tracer follows it, else its own. */
static struct ref_trace_maps *maps_of(struct ref_tracer *t, struct ref_trace_task *k)
{
	if (own_process(t, k))
		return &t->maps;
	for (size_t i = 0; i < t->nr_tasks; i++)
		if (t->tasks[i].tid == k->pid)
			return &t->tasks[i].maps;
	return &k->maps;
}

static int known(const struct ref_trace_maps *ms, const struct ref_trace_map *m)
{
	for (size_t i = 0; i < ms->nr; i++)
		if (!memcmp(&ms->v[i], m, sizeof(*m)))
			return 1;
	return 0;
}

static int remember(struct ref_trace_maps *ms, const struct ref_trace_map *m)
{
	if (ms->nr == ms->cap) {
		size_t cap = ms->cap ? 2 * ms->cap : 32;
		struct ref_trace_map *n = realloc(ms->v, cap * sizeof(*n));

		if (!n)
			return -1;
		ms->v = n;
		ms->cap = cap;
	}
	ms->v[ms->nr++] = *m;
	return 0;
}

/* One /proc/PID/maps line into m; 0 when it is one. Executable or not: the events
 * with mmap_data want the others too (ref_event_sb_mmap() picks). */
static int parse_map(const char *line, struct ref_sb_map *m)
{
	char perms[8];
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	int pos = 0;
	const char *name;
	size_t n;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj,
		   &min, &ino, &pos) < 7 || !pos)
		return -1;
	memset(m, 0, offsetof(struct ref_sb_map, name));
	m->start = start;
	m->end = end;
	m->pgoff = off;
	m->maj = maj;
	m->min = min;
	m->ino = ino;
	m->prot = (perms[0] == 'r' ? 1u : 0) | (perms[1] == 'w' ? 2u : 0) |
		  (perms[2] == 'x' ? 4u : 0);
	m->flags = perms[3] == 's' ? 1u : 2u; /* MAP_SHARED : MAP_PRIVATE */
	name = line + pos;
	n = strcspn(name, "\n");
	if (!n)
		name = "//anon", n = 6;
	if (n >= sizeof(m->name))
		n = sizeof(m->name) - 1;
	memcpy(m->name, name, n);
	m->name[n] = 0;
	return 0;
}

/* i_generation, which /proc/PID/maps does not show (ext4 and the like have one). */
static uint64_t ino_generation(const char *path)
{
	int fd, gen = 0;

	if (path[0] != '/')
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (ioctl(fd, FS_IOC_GETVERSION, &gen))
		gen = 0;
	close(fd);
	return (uint32_t)gen;
}

/* Tells the events each mapping they have not been told of yet. */
static void tell_maps(struct ref_tracer *t, struct ref_trace_task *k,
		      const struct pecs_sample *src)
{
	static struct ref_sb_map m; /* PATH_MAX name: off the stack; one tracer at a time */
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	char path[64], line[4200];
	struct ref_trace_maps *ms = maps_of(t, k);
	FILE *f;

	ms->last_scan = mono_ns();
	/* Through the thread: once the leader has exited, /proc/PID/maps (the leader's
	 * view) is empty while the process's other threads map on. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)k->pid, (int)k->tid);
	f = fopen(path, "re");
	if (!f)
		return;
	pthread_mutex_lock(&mu);
	while (fgets(line, sizeof(line), f)) {
		struct ref_trace_map seen;

		/* The vsyscall page is no vma: perf_event_mmap() never sees it. */
		if (parse_map(line, &m) || !strcmp(m.name, "[vsyscall]"))
			continue;
		seen = (struct ref_trace_map){m.start, m.end, m.pgoff, m.ino};
		if (known(ms, &seen) || remember(ms, &seen))
			continue;
		m.ino_generation = ino_generation(m.name);
		for (size_t i = 0; i < t->nr; i++)
			if (on_cpu(t->evs[i], k, src))
				ref_event_sb_mmap(t->evs[i], src, &m);
	}
	pthread_mutex_unlock(&mu);
	fclose(f);
}

static int comm_of(const struct ref_trace_task *k, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)k->pid, (int)k->tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(comm, (int)len, f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return 0;
}

/* begin_new_exec(): enable_on_exec first (perf_event_exec()), then the new comm with
 * the exec flag; load_elf_binary() then maps the program and its interpreter. */
void ref_trace_exec(struct ref_tracer *t, struct ref_trace_task *k)
{
	struct pecs_sample src;
	char comm[64];

	ref_trace_copy_exec(t, k);
	if (own_process(t, k)) {
		struct ref_exec_moment m;

		ref_event_exec_moment(k->pid, &m);
		for (size_t i = 0; i < t->nr; i++)
			ref_event_exec_now(t->evs[i], &m);
		t->started = 1;
	}
	if (t->exec_only)
		return;
	maps_of(t, k)->nr = 0;
	source(k, &src);
	k->due = ref_trace_cpu_ns(k) + t->period;
	if (!comm_of(k, comm, sizeof(comm)))
		for (size_t i = 0; i < t->nr; i++)
			if (on_cpu(t->evs[i], k, &src))
				ref_event_sb_comm(t->evs[i], &src, comm, 1);
	tell_maps(t, k, &src);
}

void ref_trace_exit(struct ref_tracer *t, struct ref_trace_task *k)
{
	struct pecs_sample src;
	uint64_t ppid = 0;

	ref_trace_copy_exit(t, k);
	if (t->exec_only)
		return;
	source(k, &src);
	/* What was mapped since the last look (all of it, without samples to look for
	 * it): told late, but before the exit, so a reader still finds it. */
	tell_maps(t, k, &src);
	ref_host_stat_field(k->pid, k->tid, 4, &ppid, NULL);
	for (size_t i = 0; i < t->nr; i++)
		if (on_cpu(t->evs[i], k, &src))
			ref_event_sb_exit(t->evs[i], &src, (uint32_t)ppid);
}

/* perf_event_fork(): written by the maker, to its events, inherited or not. */
void ref_trace_fork(struct ref_tracer *t, const struct ref_trace_task *k, pid_t pid, pid_t tid)
{
	struct pecs_sample src;

	source(k, &src);
	for (size_t i = 0; i < t->nr; i++)
		if (on_cpu(t->evs[i], k, &src))
			ref_event_sb_fork(t->evs[i], &src, (uint32_t)pid, (uint32_t)tid);
}

/* perf_callchain_user(): the IP, then each frame's return address up the rbp chain,
 * until a frame cannot be read. */
static uint32_t walk(const struct ref_trace_task *k, const struct user_regs_struct *r,
		     uint64_t *ips, uint32_t max)
{
	uint64_t fp = r->rbp, frame[2];
	uint32_t n = 0;

	ips[n++] = r->rip;
	while (n < max && fp) {
		struct iovec local = {frame, sizeof(frame)};
		struct iovec remote = {(void *)(uintptr_t)fp, sizeof(frame)};

		if (process_vm_readv(k->pid, &local, 1, &remote, 1, 0) != sizeof(frame))
			break;
		ips[n++] = frame[1];
		fp = frame[0];
	}
	return n;
}

static int covered(const struct ref_trace_maps *ms, uint64_t ip)
{
	for (size_t i = 0; i < ms->nr; i++)
		if (ip >= ms->v[i].start && ip < ms->v[i].end)
			return 1;
	return 0;
}

void ref_trace_sample(struct ref_tracer *t, struct ref_trace_task *k)
{
	struct user_regs_struct regs;
	uint64_t ips[MAX_FRAMES], now = ref_trace_cpu_ns(k);
	struct ref_trace_maps *ms;
	struct ref_trace_regs rs;
	struct pecs_sample s;
	int chain = 0;

	/* The periods that passed count as one sample, as perf_swevent_hrtimer() forwards
	 * an overrun timer. */
	k->due += t->period * ((now - k->due) / t->period + 1);
	if (ptrace(PTRACE_GETREGS, k->tid, 0, &regs))
		return;
	for (size_t i = 0; i < t->nr; i++)
		chain |= (t->evs[i]->attr.sample_type & PECS_SAMPLE_CALLCHAIN) != 0;
	source(k, &s);
	s.misc = PECS_MISC_USER;
	s.ips = ips;
	s.nr_ips = chain ? walk(k, &regs, ips, MAX_FRAMES) : (ips[0] = regs.rip, 1);
	ms = maps_of(t, k);
	for (uint32_t i = 0; i < s.nr_ips; i++)
		if (!covered(ms, ips[i]) && s.time - ms->last_scan >= RESCAN_NS) {
			tell_maps(t, k, &s);
			s.time = mono_ns();
			break;
		}
	ref_trace_regs_take(t->evs, t->nr, k->pid, &regs, &rs, &s);
	for (size_t i = 0; i < t->nr; i++)
		if (on_cpu(t->evs[i], k, &s) && ref_attr_is_sampling(&t->evs[i]->attr))
			ref_event_deliver_locked(t->evs[i], &s);
	ref_trace_regs_done(&rs);
}
