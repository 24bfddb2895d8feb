/* inherit on a sampling event perf record opens on a child: the child makes a thread and
 * forks a process, each of which burns CPU time and exits. kernel/events/core.c writes a
 * FORK record for each new task to the events of the task that made it
 * (perf_event_fork(), from copy_process()), whether or not they inherit; with inherit
 * the new task gets copies of the events (perf_event_init_task()), whose samples and
 * EXIT record go to the parent event's ring; without it nothing of the new task's own is
 * written.
 *
 * An inherited per-task event (cpu -1) cannot be mapped (perf_mmap()), which is why perf
 * record opens one per CPU. Here the child, and so each task it makes, is bound to the
 * CPU the case runs on, and the event is opened on that CPU alone. The records are read
 * once the child is a zombie, after it waited for its thread and its process: nothing
 * waits on the wall clock, and the samples are asked of CPU time the new tasks burn, in
 * user space (pecs_burn_user): under ptrace a burner that read its CPU clock every
 * microsecond spent its time in the clock's system call, where a user-only event takes
 * no sample (0 samples of the thread's 30 ms under strace -f). */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/ring.h"

#define MS 1000000ull
#define BURN_NS (30 * MS)
#define PERIOD_NS MS
#define SAMPLE_TYPE (PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME)
#define TRAILER 16u /* sample_id_all of TID|TIME: {pid, tid}, time */
#define TASK_SIZE (8u + 16u + 8u + TRAILER)
#define MAX_RECS 1024
#define REC_BYTES 64

/* One run's records, in ring order, each cut to REC_BYTES. */
struct run {
	pid_t kid, thread, child, vforked;
	int nr;
	struct {
		struct pecs_record_header h;
		uint8_t b[REC_BYTES];
	} recs[MAX_RECS];
};

/* Opens the event on the child (inherit or not), has it make a thread and a process (or
 * what cmds says), lets it exit, waits until it is a zombie (left unreaped, WNOWAIT) and
 * copies out the ring's records. */
static void record_child_cmds(struct pecs_t *t, int inherit, const char *cmds,
			      struct run *out)
{
	static struct pecs_ring r;
	const struct pecs_record_header *rec;
	struct pecs_attr a;
	struct pecs_kid_opts o = {.flags = PECS_KID_ON_CPU, .burn_ns = BURN_NS};
	struct pecs_kid *k;
	siginfo_t si;
	int cpu = sched_getcpu(), fd, ret;
	uint64_t lost = 0;
	pid_t kid;

	if (cpu < 0)
		PECS_ENV_SKIP(t, "sched_getcpu: %s", pecs_errname(errno));
	/* Bound to the CPU, it burns BURN_NS in user space in each thread and process it
	 * makes, and before each vfork. */
	o.cpu = cpu;
	ret = pecs_kid_start(t, &o, &k);
	if (ret)
		PECS_ENV_SKIP(t, "the child could not bind itself to CPU %d: %s", cpu,
			      pecs_errname(-ret));
	kid = pecs_kid_pid(k);
	pecs_attr_sampling(t, &a, PECS_SW_CPU_CLOCK, PERIOD_NS, SAMPLE_TYPE);
	a.flags |= PECS_ATTR_TASK | PECS_ATTR_SAMPLE_ID_ALL | PECS_ATTR_EXCLUDE_KERNEL |
		   PECS_ATTR_EXCLUDE_HV | (inherit ? PECS_ATTR_INHERIT : 0);
	a.flags &= ~PECS_ATTR_DISABLED;
	fd = pecs_open(t, &a, kid, cpu, -1, 0);
	PECS_CHECK_OK(t, fd, "%s event on the child %d, CPU %d", inherit ? "an inherit" : "an",
		      (int)kid, cpu);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 64, PROT_READ | PROT_WRITE, &r));
	out->kid = kid;
	for (const char *c = cmds; *c; c++) {
		pid_t id = pecs_kid_do(t, k, (enum pecs_kid_cmd)*c);

		*(*c == 't' ? &out->thread : *c == 'f' ? &out->child : &out->vforked) = id;
	}
	pecs_kid_do(t, k, PECS_KID_EXIT);
	/* Only an exit ends the wait: a ptrace stop of a tracer in this process (ref's, see
	 * "Divergences ref keeps" in docs/behaviours.md) is waited past. */
	pecs_kid_wait_zombie(t, k, &si);
	if (si.si_code != CLD_EXITED || si.si_status != 0)
		PECS_BROKEN(t, "the child ended with code %d status %d", si.si_code, si.si_status);
	out->nr = 0;
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		size_t n = rec->size < sizeof(out->recs[0]) ? rec->size : sizeof(out->recs[0]);

		if (rec->type == PECS_RECORD_LOST) {
			PECS_CHECK_OK(t, pecs_ring_lost_ok(rec, NULL, 0, &lost), "a LOST record");
			continue;
		}
		PECS_CHECK(t, out->nr < MAX_RECS, "more than %d records", MAX_RECS);
		memcpy(&out->recs[out->nr++], rec, n);
	}
	PECS_CHECK_OK(t, ret, "the ring's records");
	/* The records asked for are a handful among the samples of 64 pages: none lost. */
	PECS_CHECK(t, lost == 0, "%llu records lost", (unsigned long long)lost);
}

static void record_child(struct pecs_t *t, int inherit, struct run *out)
{
	record_child_cmds(t, inherit, "tf", out);
}

static uint32_t u32_at(const void *rec, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)rec + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const void *rec, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)rec + off, sizeof(v));
	return v;
}

/* The index of the FORK or EXIT record of task tid, -1 when there is none. */
static int task_record(const struct run *run, uint32_t type, pid_t tid)
{
	for (int i = 0; i < run->nr; i++)
		if (run->recs[i].h.type == type && u32_at(&run->recs[i], 16) == (uint32_t)tid)
			return i;
	return -1;
}

/* A FORK or EXIT record: {pid, ppid, tid, ptid, time} then the trailer's {pid, tid}. */
static void check_task(struct pecs_t *t, const struct run *run, int i, const char *what,
		       const uint32_t want[4], pid_t by_pid, pid_t by_tid)
{
	const struct pecs_record_header *h = &run->recs[i].h;

	PECS_CHECK_EQ(t, h->size, TASK_SIZE);
	PECS_CHECK(t, h->misc == 0, "%s: misc %#x", what, h->misc);
	PECS_CHECK(t, u32_at(h, 8) == want[0] && u32_at(h, 12) == want[1] &&
			      u32_at(h, 16) == want[2] && u32_at(h, 20) == want[3],
		   "%s: pid %u ppid %u tid %u ptid %u, expected %u %u %u %u", what, u32_at(h, 8),
		   u32_at(h, 12), u32_at(h, 16), u32_at(h, 20), want[0], want[1], want[2],
		   want[3]);
	PECS_CHECK(t, u32_at(h, 32) == (uint32_t)by_pid && u32_at(h, 36) == (uint32_t)by_tid,
		   "%s: trailer pid/tid %u/%u, expected the task that wrote it, %d/%d", what,
		   u32_at(h, 32), u32_at(h, 36), (int)by_pid, (int)by_tid);
}

/* FORK before EXIT, in the ring and in time. */
static void check_order(struct pecs_t *t, const struct run *run, int fork, int exit,
			const char *what)
{
	PECS_CHECK(t, fork < exit, "%s: FORK is record %d, EXIT record %d", what, fork, exit);
	PECS_CHECK(t, u64_at(&run->recs[fork], 24) <= u64_at(&run->recs[exit], 24),
		   "%s: FORK at %llu ns, EXIT at %llu ns", what,
		   (unsigned long long)u64_at(&run->recs[fork], 24),
		   (unsigned long long)u64_at(&run->recs[exit], 24));
}

/* The FORK and the EXIT of the task the child made (who: "thread" or "process"), each
 * as want_fork and want_exit say: the FORK written by the child, the EXIT by exit_by. */
static void check_fork_exit(struct pecs_t *t, const struct run *run, pid_t task,
			    const char *who, const uint32_t want_fork[4],
			    const uint32_t want_exit[4], pid_t exit_by_pid, pid_t exit_by_tid)
{
	char what[64];
	int fork = task_record(run, PECS_RECORD_FORK, task);
	int exit = task_record(run, PECS_RECORD_EXIT, task);

	PECS_CHECK(t, fork >= 0, "no FORK record of the %s %d among %d records", who, (int)task,
		   run->nr);
	PECS_CHECK(t, exit >= 0, "no EXIT record of the %s %d among %d records", who, (int)task,
		   run->nr);
	snprintf(what, sizeof(what), "the %s's FORK", who);
	check_task(t, run, fork, what, want_fork, run->kid, run->kid);
	snprintf(what, sizeof(what), "the %s's EXIT", who);
	check_task(t, run, exit, what, want_exit, exit_by_pid, exit_by_tid);
	snprintf(what, sizeof(what), "the %s", who);
	check_order(t, run, fork, exit, what);
}

/* A thread's FORK: the process's pid, its tid, the making thread as ppid/ptid, written by
 * that thread; its EXIT (from the inherited event): ppid and ptid the process's parent. */
PECS_CASE("Required.Record.PidTask.InheritWritesForkAndExitOfANewThread",
	  "mmap,sampling,pid.other", "RECORD-PID-INHERIT-THREAD-FORK-EXIT")
{
	static struct run run;

	record_child(t, 1, &run);
	check_fork_exit(t, &run, run.thread, "thread",
			(const uint32_t[4]){run.kid, run.kid, run.thread, run.kid},
			(const uint32_t[4]){run.kid, getpid(), run.thread, getpid()}, run.kid,
			run.thread);
}

/* A process's FORK: its pid as pid and tid, the child as ppid/ptid; its EXIT: its parent,
 * the child, as ppid and ptid, written by the process itself. */
PECS_CASE("Required.Record.PidTask.InheritWritesForkAndExitOfANewProcess",
	  "mmap,sampling,pid.other", "RECORD-PID-INHERIT-PROCESS-FORK-EXIT")
{
	static struct run run;

	record_child(t, 1, &run);
	check_fork_exit(t, &run, run.child, "process",
			(const uint32_t[4]){run.child, run.kid, run.child, run.kid},
			(const uint32_t[4]){run.child, run.kid, run.child, run.kid}, run.child,
			run.child);
}

/* A vfork's maker sleeps until its task exits or executes, where no ptrace interrupt
 * reaches it: an implementation that samples from outside must not wait for the maker's
 * stop while it holds the new task. The maker burns CPU time up to the vfork, so a
 * sample is due as it sleeps; the FORK and EXIT of the vforked process are as a fork's. */
PECS_CASE("Required.Record.PidTask.InheritFollowsAVforkedProcess", "mmap,sampling,pid.other",
	  "RECORD-PID-INHERIT-VFORK")
{
	static struct run run;
	int fork, exit;

	record_child_cmds(t, 1, "vv", &run);
	fork = task_record(&run, PECS_RECORD_FORK, run.vforked);
	exit = task_record(&run, PECS_RECORD_EXIT, run.vforked);
	PECS_CHECK(t, fork >= 0 && exit >= 0, "FORK record %d, EXIT record %d of the vforked "
		   "process %d among %d records", fork, exit, (int)run.vforked, run.nr);
	check_task(t, &run, fork, "the vforked process's FORK",
		   (const uint32_t[4]){run.vforked, run.kid, run.vforked, run.kid}, run.kid,
		   run.kid);
	check_task(t, &run, exit, "the vforked process's EXIT",
		   (const uint32_t[4]){run.vforked, run.kid, run.vforked, run.kid}, run.vforked,
		   run.vforked);
	check_order(t, &run, fork, exit, "the vforked process");
}

/* The samples of the inherited events: some from the thread (the process's pid, the
 * thread's tid) and some from the process, each burned 30 periods of CPU time. */
PECS_CASE("Required.Record.PidTask.InheritSamplesTheNewThreadAndProcess",
	  "mmap,sampling,pid.other", "RECORD-PID-INHERIT-SAMPLES")
{
	static struct run run;
	int thread = 0, child = 0, kid = 0;
	struct pecs_parsed_sample s;

	record_child(t, 1, &run);
	for (int i = 0; i < run.nr; i++) {
		if (run.recs[i].h.type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(&run.recs[i].h, SAMPLE_TYPE, 0, &s));
		thread += s.pid == (uint32_t)run.kid && s.tid == (uint32_t)run.thread;
		child += s.pid == (uint32_t)run.child && s.tid == (uint32_t)run.child;
		kid += s.pid == (uint32_t)run.kid && s.tid == (uint32_t)run.kid;
		PECS_CHECK(t, s.pid == (uint32_t)run.kid || s.pid == (uint32_t)run.child,
			   "a sample of pid %u/%u, from none of the child's tasks", s.pid, s.tid);
	}
	PECS_CHECK(t, thread > 0 && child > 0, "%d samples from the thread %d, %d from the "
		   "process %d (%d from the child itself), after each burned %llu ms at a "
		   "period of %llu ms", thread, (int)run.thread, child, (int)run.child, kid,
		   (unsigned long long)(BURN_NS / MS), (unsigned long long)(PERIOD_NS / MS));
}

/* Without inherit the child's event still gets the FORK of each task it makes (they are
 * written to the maker's events), but no sample and no EXIT of the new tasks. */
PECS_CASE("Required.Record.PidTask.WithoutInheritOnlyTheForkIsWritten",
	  "mmap,sampling,pid.other", "RECORD-PID-NO-INHERIT-FORK-ONLY")
{
	static struct run run;
	struct pecs_parsed_sample s;
	int fork;

	record_child(t, 0, &run);
	fork = task_record(&run, PECS_RECORD_FORK, run.thread);
	PECS_CHECK(t, fork >= 0, "no FORK record of the thread %d", (int)run.thread);
	check_task(t, &run, fork, "the thread's FORK",
		   (const uint32_t[4]){run.kid, run.kid, run.thread, run.kid}, run.kid, run.kid);
	fork = task_record(&run, PECS_RECORD_FORK, run.child);
	PECS_CHECK(t, fork >= 0, "no FORK record of the process %d", (int)run.child);
	check_task(t, &run, fork, "the process's FORK",
		   (const uint32_t[4]){run.child, run.kid, run.child, run.kid}, run.kid, run.kid);
	PECS_CHECK(t, task_record(&run, PECS_RECORD_EXIT, run.thread) < 0 &&
			      task_record(&run, PECS_RECORD_EXIT, run.child) < 0,
		   "an EXIT of a task the event was not inherited by");
	for (int i = 0; i < run.nr; i++) {
		if (run.recs[i].h.type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(&run.recs[i].h, SAMPLE_TYPE, 0, &s));
		PECS_CHECK(t, s.pid == (uint32_t)run.kid && s.tid == (uint32_t)run.kid,
			   "a sample of %u/%u without inherit on the child %d", s.pid, s.tid,
			   (int)run.kid);
	}
}
