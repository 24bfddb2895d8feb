/* The side-band records perf record needs around the samples of a child it starts:
 * a sampling event opened as perf record opens it (disabled, enable_on_exec, comm, mmap,
 * mmap2, comm_exec, task, sample_id_all) on a child that waits for the word to exec,
 * then the child executes EXEC_PATH and exits. kernel/events/core.c writes a COMM with
 * the exec flag (perf_event_comm(), from begin_new_exec()), an MMAP2 for each executable
 * mapping the exec makes (perf_event_mmap()), and an EXIT (perf_event_task() from
 * perf_event_exit_task()). Nothing here waits on the wall clock: the records are read
 * once the child is a zombie. */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/kid.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/safe.h"

#define EXEC_PATH "/bin/true"
#define EXEC_COMM "true"
#define PERIOD_NS 10000000ull /* cpu-clock: few samples, the records are what counts */
#define MISC_COMM_EXEC (1u << 13)
#define RECORD_MMAP2 10u
#define MAX_RECS 64
#define REC_BYTES 512

/* The records of one run, in ring order, each cut to REC_BYTES. */
struct run {
	pid_t pid;
	int nr;
	struct {
		struct pecs_record_header h;
		uint8_t b[REC_BYTES];
	} recs[MAX_RECS];
};

/* Opens the event perf record opens on the child, lets it exec, waits until it is a
 * zombie (left unreaped, WNOWAIT) and copies out the ring's records. */
static void record_child(struct pecs_t *t, struct run *out)
{
	static struct pecs_ring r;
	const struct pecs_record_header *rec;
	struct pecs_attr a;
	const struct pecs_kid_opts o = {.exec_path = EXEC_PATH};
	struct pecs_kid *k;
	siginfo_t si;
	int fd, ret;
	pid_t kid;

	if (access(EXEC_PATH, X_OK))
		PECS_ENV_SKIP(t, "no %s to execute", EXEC_PATH);
	PECS_SAFE_HOST(t, pecs_kid_start(t, &o, &k));
	kid = pecs_kid_pid(k);
	pecs_attr_sampling(t, &a, PECS_SW_CPU_CLOCK, PERIOD_NS, PECS_SAMPLE_IP | PECS_SAMPLE_TID |
			   PECS_SAMPLE_TIME);
	a.flags |= PECS_ATTR_DISABLED | PECS_ATTR_ENABLE_ON_EXEC | PECS_ATTR_COMM |
		   PECS_ATTR_MMAP | PECS_ATTR_MMAP2 | PECS_ATTR_COMM_EXEC | PECS_ATTR_TASK |
		   PECS_ATTR_SAMPLE_ID_ALL | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	fd = pecs_open(t, &a, kid, -1, -1, 0);
	PECS_CHECK_OK(t, fd, "perf record's event on the child %d", (int)kid);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 16, PROT_READ | PROT_WRITE, &r));
	pecs_kid_do(t, k, PECS_KID_EXEC);
	/* Only an exit ends the wait: a ptrace stop of a tracer in this process (ref's, see
	 * "Divergences ref keeps" in docs/behaviours.md) is waited past. */
	pecs_kid_wait_zombie(t, k, &si);
	if (si.si_code == CLD_EXITED && si.si_status == 127)
		PECS_ENV_SKIP(t, "the child could not execute %s", EXEC_PATH);
	out->pid = kid;
	out->nr = 0;
	while ((ret = pecs_ring_next(&r, &rec)) > 0 && out->nr < MAX_RECS) {
		size_t n = rec->size < sizeof(out->recs[0]) ? rec->size : sizeof(out->recs[0]);

		memcpy(&out->recs[out->nr++], rec, n);
	}
	PECS_CHECK_OK(t, ret, "the ring's records");
}

static uint32_t u32_at(const void *rec, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)rec + off, sizeof(v));
	return v;
}

/* A string field of record i at byte off of the record (past its 8-byte header). */
static const char *str_at(const struct run *run, int i, size_t off)
{
	return (const char *)run->recs[i].b + (off - sizeof(struct pecs_record_header));
}

static int find(const struct run *run, uint32_t type, int from)
{
	for (int i = from; i < run->nr; i++)
		if (run->recs[i].h.type == type)
			return i;
	return -1;
}

/* The sample_id_all trailer of IP|TID|TIME: {pid, tid}, time, at the record's end. */
static void check_trailer(struct pecs_t *t, const struct run *run, int i, const char *what)
{
	const struct pecs_record_header *h = &run->recs[i].h;

	PECS_CHECK(t, u32_at(h, h->size - 16) == (uint32_t)run->pid &&
			      u32_at(h, h->size - 12) == (uint32_t)run->pid,
		   "%s: trailer pid/tid %u/%u, expected the child %d", what,
		   u32_at(h, h->size - 16), u32_at(h, h->size - 12), (int)run->pid);
}

PECS_CASE("Required.Record.PidTask.ExecWritesCommWithExecFlag", "mmap,sampling,pid.other",
	  "RECORD-PID-COMM-EXEC")
{
	static struct run run;
	const struct pecs_record_header *h;
	int i;

	record_child(t, &run);
	i = find(&run, PECS_RECORD_COMM, 0);
	PECS_CHECK(t, i >= 0, "no COMM record among the %d records of the child's run", run.nr);
	h = &run.recs[i].h;
	PECS_CHECK(t, h->misc & MISC_COMM_EXEC, "COMM misc %#x lacks the exec flag %#x",
		   h->misc, MISC_COMM_EXEC);
	PECS_CHECK(t, u32_at(h, 8) == (uint32_t)run.pid && u32_at(h, 12) == (uint32_t)run.pid,
		   "COMM pid/tid %u/%u, expected the child %d", u32_at(h, 8), u32_at(h, 12),
		   (int)run.pid);
	PECS_CHECK(t, strcmp(str_at(&run, i, 16), EXEC_COMM) == 0, "COMM names \"%.16s\", "
		   "expected \"%s\"", str_at(&run, i, 16), EXEC_COMM);
	/* header, pid/tid, the name padded to 8 with its NUL, the 16-byte trailer */
	PECS_CHECK_EQ(t, h->size, 8 + 8 + 8 + 16);
	check_trailer(t, &run, i, "COMM");
}

PECS_CASE("Required.Record.PidTask.ExecWritesMmap2OfTheProgram", "mmap,sampling,pid.other",
	  "RECORD-PID-MMAP2-EXEC")
{
	static struct run run;
	char want[PATH_MAX];
	int comm, i;

	if (!realpath(EXEC_PATH, want))
		PECS_ENV_SKIP(t, "realpath %s: %s", EXEC_PATH, pecs_errname(errno));
	record_child(t, &run);
	comm = find(&run, PECS_RECORD_COMM, 0);
	for (i = find(&run, RECORD_MMAP2, 0); i >= 0; i = find(&run, RECORD_MMAP2, i + 1)) {
		const struct pecs_record_header *h = &run.recs[i].h;
		/* pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags */
		const char *name = str_at(&run, i, 8 + 8 + 24 + 8 + 16 + 8);

		if (strcmp(name, want))
			continue;
		PECS_CHECK(t, u32_at(h, 8) == (uint32_t)run.pid, "MMAP2 pid %u, expected %d",
			   u32_at(h, 8), (int)run.pid);
		PECS_CHECK(t, u32_at(h, 8 + 8 + 24 + 8 + 16) & PROT_EXEC,
			   "MMAP2 of %s: prot %#x without PROT_EXEC", want,
			   u32_at(h, 8 + 8 + 24 + 8 + 16));
		PECS_CHECK(t, (h->misc & 7u) == PECS_MISC_USER, "MMAP2 misc %#x, expected a "
			   "user mapping", h->misc);
		PECS_CHECK(t, comm >= 0 && comm < i, "the program's MMAP2 (record %d) is not "
			   "after the exec's COMM (record %d)", i, comm);
		check_trailer(t, &run, i, "MMAP2");
		return;
	}
	PECS_FAIL(t, "no MMAP2 record for %s among the %d records of the child's run", want,
		  run.nr);
}

PECS_CASE("Required.Record.PidTask.ExitWritesExit", "mmap,sampling,pid.other",
	  "RECORD-PID-EXIT")
{
	static struct run run;
	const struct pecs_record_header *h;
	int i;

	record_child(t, &run);
	i = find(&run, PECS_RECORD_EXIT, 0);
	PECS_CHECK(t, i >= 0, "no EXIT record among the %d records of the child's run", run.nr);
	h = &run.recs[i].h;
	PECS_CHECK(t, u32_at(h, 8) == (uint32_t)run.pid && u32_at(h, 16) == (uint32_t)run.pid,
		   "EXIT pid/tid %u/%u, expected the child %d", u32_at(h, 8), u32_at(h, 16),
		   (int)run.pid);
	PECS_CHECK(t, u32_at(h, 12) == (uint32_t)getpid() && u32_at(h, 20) == (uint32_t)getpid(),
		   "EXIT ppid/ptid %u/%u, expected the parent %d", u32_at(h, 12), u32_at(h, 20),
		   (int)getpid());
	/* header, pid/ppid/tid/ptid, time, the trailer */
	PECS_CHECK_EQ(t, h->size, 8 + 16 + 8 + 16);
	PECS_CHECK(t, i == run.nr - 1 || find(&run, PECS_RECORD_COMM, i + 1) < 0,
		   "records after the EXIT");
	check_trailer(t, &run, i, "EXIT");
}
