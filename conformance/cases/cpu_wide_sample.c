#define _GNU_SOURCE
/* Sampling on a CPU (pid -1, cpu N): the event's hrtimer fires on N and samples whoever
 * is current there (perf_swevent_hrtimer() -> perf_event_overflow() with current's
 * registers), and its side-band records are those of every task on N
 * (perf_iterate_sb() walks the events of the CPU the task is on): a switch is written
 * as PERF_RECORD_SWITCH_CPU_WIDE naming the other task (perf_event_switch()), a task
 * exec'd there gives its COMM and MMAP2 records, its exit an EXIT. The watched task is
 * a child of the caller bound to the last CPU; the caller stays on CPU 0. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/cpu.h"
#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"

#define RECORD_SWITCH 14u
#define RECORD_SWITCH_CPU_WIDE 15u
#define RECORD_MMAP2 10u
#define MISC_SWITCH_OUT (1u << 13)
#define MISC_COMM_EXEC (1u << 13)
#define EXEC_PATH "/bin/true"
#define EXEC_COMM "true"
/* The trailer of sample_id_all with these: {pid, tid}, time, {cpu, res}. */
#define ID_TYPE (PECS_SAMPLE_TID | PECS_SAMPLE_TIME | PECS_SAMPLE_CPU)

/* perf_allow_cpu(), then the watched CPU (the last); the caller moves to CPU 0. */
static int setup(struct pecs_t *t)
{
	int cpu = pecs_host(t)->ncpus - 1, err;

	if (!pecs_host(t)->privileged && pecs_host(t)->paranoid > 0)
		PECS_ENV_SKIP(t, "cpu-wide events need CAP_PERFMON at perf_event_paranoid %d "
			      "(perf_allow_cpu(), Open.PidCpu.CpuWideNeedsPrivilege)",
			      pecs_host(t)->paranoid);
	pecs_keep_affinity(t, NULL);
	if (cpu > 0 && (err = pecs_pin_self(0)))
		PECS_ENV_SKIP(t, "cannot pin this thread to CPU 0: %s", strerror(err));
	return cpu;
}

static uint32_t u32_at(const struct pecs_record_header *h, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)h + off, sizeof(v));
	return v;
}

/* A cpu-clock sampler on cpu with period_ns, the kernel counted, its ring mapped. */
static int open_sampler(struct pecs_t *t, int cpu, uint64_t period_ns, uint64_t flags,
			struct pecs_ring *r)
{
	struct pecs_attr a;
	int fd;

	pecs_attr_sampling(t, &a, PECS_SW_CPU_CLOCK, period_ns,
			   ID_TYPE | PECS_SAMPLE_PERIOD);
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	a.flags |= flags;
	fd = pecs_open(t, &a, -1, cpu, -1, 0);
	PECS_CHECK_OK(t, fd, "a cpu-clock sampler on cpu %d", cpu);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 256, PROT_READ | PROT_WRITE, r));
	return fd;
}

/* A child on the watched CPU burns 50 ms of CPU time under a 1 ms sampler: samples name
 * it (at least 10 of them), and every sample says that CPU, the period, and a time no
 * earlier than the one before. */
PECS_CASE("Required.CpuWide.Sample.WhoeverRunsOnTheCpu", "mmap,sampling,policy",
	  "CPU-WIDE-SAMPLE-WHOEVER-RUNS")
{
	static struct pecs_ring r;
	const uint64_t st = ID_TYPE | PECS_SAMPLE_PERIOD;
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	struct pecs_kid_opts o = { .flags = PECS_KID_ON_CPU, .burn_ns = 50000000 };
	struct pecs_kid *k;
	int fd, err, ret, samples = 0, its = 0;
	uint64_t last = 0;

	o.cpu = setup(t);
	err = pecs_kid_start(t, &o, &k);
	if (err)
		PECS_ENV_SKIP(t, "no child bound to CPU %d: %s", o.cpu, strerror(-err));
	fd = open_sampler(t, o.cpu, 1000000, 0, &r);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_kid_do(t, k, PECS_KID_BURN);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, pecs_parse_sample(rec, st, 0, &s));
		samples++;
		its += s.pid == (uint32_t)pecs_kid_pid(k);
		PECS_CHECK(t, s.cpu == (uint32_t)o.cpu && s.period == 1000000 && s.time >= last,
			   "sample %d: cpu %u (watched %d), period %llu, time %llu after %llu",
			   samples, s.cpu, o.cpu, (unsigned long long)s.period,
			   (unsigned long long)s.time, (unsigned long long)last);
		last = s.time;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, its >= 10, "%d of %d samples name the child %d that burned 50 ms on "
		   "cpu %d", its, samples, (int)pecs_kid_pid(k), o.cpu);
}

/* context_switch on a cpu-wide event: every switch there is a SWITCH_CPU_WIDE record
 * (never the task form), the process that sleeps is switched out and in, and each
 * record's trailer says the watched CPU. */
PECS_CASE("Required.CpuWide.Sample.SwitchCpuWideRecords", "mmap,sampling,policy",
	  "CPU-WIDE-SAMPLE-SWITCH")
{
	static struct pecs_ring r;
	const struct pecs_record_header *rec;
	struct pecs_kid_opts o = { .flags = PECS_KID_ON_CPU, .sleeps = 10 };
	struct pecs_kid *k;
	int fd, err, ret, outs = 0, ins = 0, task_form = 0;
	pid_t pid;

	o.cpu = setup(t);
	err = pecs_kid_start(t, &o, &k);
	if (err)
		PECS_ENV_SKIP(t, "no child bound to CPU %d: %s", o.cpu, strerror(-err));
	fd = open_sampler(t, o.cpu, 1000000000, PECS_ATTR_CONTEXT_SWITCH |
			  PECS_ATTR_SAMPLE_ID_ALL, &r);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pid = pecs_kid_do(t, k, PECS_KID_FORK);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		task_form += rec->type == RECORD_SWITCH;
		if (rec->type != RECORD_SWITCH_CPU_WIDE)
			continue;
		/* header, next_prev_pid, next_prev_tid, then {pid, tid}, time, {cpu, res} */
		PECS_CHECK(t, rec->size == 40 && u32_at(rec, 32) == (uint32_t)o.cpu,
			   "SWITCH_CPU_WIDE of %u bytes, trailer cpu %u (watched %d)", rec->size,
			   rec->size >= 40 ? u32_at(rec, 32) : 0, o.cpu);
		if (u32_at(rec, 16) != (uint32_t)pid)
			continue;
		if (rec->misc & MISC_SWITCH_OUT)
			outs++;
		else
			ins++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK_EQ(t, task_form, 0, "PERF_RECORD_SWITCH records on a cpu-wide event");
	PECS_CHECK(t, outs >= 1 && ins >= 1, "process %d slept %u times on cpu %d: %d "
		   "switches out, %d in", (int)pid, o.sleeps, o.cpu, outs, ins);
}

/* A child on the watched CPU executes EXEC_PATH: COMM (exec flag, the new name), MMAP2
 * and EXIT records name it, though the caller opened the event for the CPU only. */
PECS_CASE("Required.CpuWide.Sample.AnotherProcessExecRecords", "mmap,sampling,policy",
	  "CPU-WIDE-SAMPLE-SIDEBAND")
{
	static struct pecs_ring r;
	const struct pecs_record_header *rec;
	struct pecs_kid_opts o = { .flags = PECS_KID_ON_CPU, .exec_path = EXEC_PATH };
	struct pecs_kid *k;
	siginfo_t si;
	int fd, err, ret, comm = 0, mmap2 = 0, exits = 0;
	uint32_t kid;

	o.cpu = setup(t);
	if (access(EXEC_PATH, X_OK))
		PECS_ENV_SKIP(t, "no %s to execute", EXEC_PATH);
	err = pecs_kid_start(t, &o, &k);
	if (err)
		PECS_ENV_SKIP(t, "no child bound to CPU %d: %s", o.cpu, strerror(-err));
	kid = (uint32_t)pecs_kid_pid(k);
	fd = open_sampler(t, o.cpu, 1000000000, PECS_ATTR_COMM | PECS_ATTR_COMM_EXEC |
			  PECS_ATTR_MMAP | PECS_ATTR_MMAP2 | PECS_ATTR_TASK |
			  PECS_ATTR_SAMPLE_ID_ALL, &r);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_kid_do(t, k, PECS_KID_EXEC);
	pecs_kid_wait_zombie(t, k, &si);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	if (si.si_code == CLD_EXITED && si.si_status == 127)
		PECS_ENV_SKIP(t, "the child could not execute %s", EXEC_PATH);
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		/* COMM: pid, tid, comm; MMAP2: pid, tid, ...; EXIT: pid, ppid, tid, ptid */
		if (rec->type == PECS_RECORD_COMM && u32_at(rec, 8) == kid)
			comm += (rec->misc & MISC_COMM_EXEC) &&
				!strncmp((const char *)rec + 16, EXEC_COMM, sizeof(EXEC_COMM));
		else if (rec->type == RECORD_MMAP2 && u32_at(rec, 8) == kid)
			mmap2++;
		else if (rec->type == PECS_RECORD_EXIT && u32_at(rec, 8) == kid)
			exits++;
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, comm == 1 && mmap2 >= 1 && exits == 1, "child %u executed %s on cpu %d: "
		   "%d exec COMM records naming \"%s\", %d MMAP2, %d EXIT", kid, EXEC_PATH, o.cpu,
		   comm, EXEC_COMM, mmap2, exits);
}
