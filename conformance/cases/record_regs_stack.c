/* The sampled thread's registers and user stack in PERF_RECORD_SAMPLE, on a user-only
 * TASK_CLOCK sampler of the calling thread (kernel/events/core.c, Linux 6.12):
 *  - REGS_USER: perf_sample_regs_user() takes the interrupted user registers, abi
 *    perf_reg_abi() (PERF_SAMPLE_REGS_ABI_64 for a 64-bit task); perf_output_sample_regs()
 *    writes one u64 per mask bit, lowest bit first (enum perf_event_x86_regs order).
 *  - STACK_USER: perf_sample_ustack_size() keeps the requested size (it fits the record);
 *    perf_output_sample_ustack() writes it, then that many bytes copied from the user SP
 *    (past a fault the kernel skips the rest), then dyn_size, the bytes actually copied.
 *  - REGS_INTR: perf_sample_regs_intr() takes the registers the overflow interrupted;
 *    with exclude_kernel every sample was taken in user mode, so they are the user ones.
 * A loop in inline assembly holds known values in the callee-saved registers while it
 * burns CPU; samples whose IP lies inside it must show them, and a marker in its caller's
 * frame must be in the stack copy at its distance from the sampled SP. x86-64 only: the
 * register numbers are that architecture's. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "pecs/toolkit/event.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"

#define ABI_64 2u /* PERF_SAMPLE_REGS_ABI_64 */
#define STACK_BYTES 2048u
#define MARKS 5
#define NR_REGS 8

/* enum perf_event_x86_regs: BX 1, BP 6, SP 7, IP 8, R12-R15 20-23. */
#define MASK ((1ull << 1) | (1ull << 6) | (1ull << 7) | (1ull << 8) | (0xfull << 20))
enum { R_BX, R_BP, R_SP, R_IP, R_R12, R_R13, R_R14, R_R15 };

static const uint64_t marks[MARKS] = {
	0x5eed0000000000b1ull, 0x5eed000000000c12ull, 0x5eed000000000d13ull,
	0x5eed000000000e14ull, 0x5eed000000000f15ull,
};
static const uint64_t stack_mark[4] = {
	0x57ac4b0000000001ull, 0x57ac4b0000000002ull, 0x57ac4b0000000003ull,
	0x57ac4b0000000004ull,
};

/* Where the last loop ran: its code, the SP inside it, and the marker's address. */
struct loop_facts {
	uint64_t lo, hi, sp, mark_at;
};

#if defined(__x86_64__)
/* Spins iters times with rbx, r12-r15 holding marks[]. mark lies in the caller's frame,
 * above the SP the loop runs at (this leaf's own locals may sit in the red zone below). */
static __attribute__((noinline)) void marked_loop(uint64_t iters, const volatile uint64_t *mark,
						  struct loop_facts *f)
{
	uint64_t lo, hi, sp;

	__asm__ volatile("mov 0(%[m]), %%rbx\n\t"
			 "mov 8(%[m]), %%r12\n\t"
			 "mov 16(%[m]), %%r13\n\t"
			 "mov 24(%[m]), %%r14\n\t"
			 "mov 32(%[m]), %%r15\n\t"
			 "lea 2f(%%rip), %[lo]\n\t"
			 "lea 3f(%%rip), %[hi]\n\t"
			 "mov %%rsp, %[sp]\n\t"
			 "2: dec %[n]\n\t"
			 "jnz 2b\n\t"
			 "3:\n\t"
			 : [n] "+r"(iters), [lo] "=&r"(lo), [hi] "=&r"(hi), [sp] "=&r"(sp)
			 : [m] "r"(marks)
			 : "rbx", "r12", "r13", "r14", "r15", "cc", "memory");
	f->lo = lo;
	f->hi = hi;
	f->sp = sp;
	f->mark_at = (uint64_t)(uintptr_t)mark;
}
#endif

struct run {
	int samples, in_loop;
	int fails;
	char first[320]; /* what the first wrong sample showed */
	struct loop_facts f;
};

static const uint8_t *take_u64(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	if (!p || end - p < 8)
		return NULL;
	memcpy(v, p, 8);
	return p + 8;
}

/* The register block at p: abi, then one u64 per mask bit. NULL when it runs past end. */
static const uint8_t *take_regs(const uint8_t *p, const uint8_t *end, uint64_t *abi,
				uint64_t regs[NR_REGS])
{
	p = take_u64(p, end, abi);
	if (!p || !*abi)
		return p;
	for (int i = 0; i < NR_REGS && p; i++)
		p = take_u64(p, end, &regs[i]);
	return p;
}

struct parsed {
	uint64_t ip;
	uint64_t abi, regs[NR_REGS];
	uint64_t stack_size, dyn_size;
	const uint8_t *stack;
	uint64_t intr_abi, intr[NR_REGS];
	size_t size;
};

static int parse(const struct pecs_record_header *rec, uint64_t st, struct parsed *out)
{
	struct pecs_parsed_sample s;
	const uint8_t *p, *end = (const uint8_t *)rec + rec->size;
	int ret = pecs_parse_sample(rec, st & (PECS_SAMPLE_IP | PECS_SAMPLE_TID), 0, &s);

	if (ret)
		return ret;
	memset(out, 0, sizeof(*out));
	out->ip = s.ip;
	p = (const uint8_t *)rec + s.size;
	if (st & PECS_SAMPLE_REGS_USER)
		p = take_regs(p, end, &out->abi, out->regs);
	if ((st & PECS_SAMPLE_STACK_USER) && (p = take_u64(p, end, &out->stack_size)) &&
	    out->stack_size) {
		if ((uint64_t)(end - p) < out->stack_size)
			return -EBADMSG;
		out->stack = p;
		p = take_u64(p + out->stack_size, end, &out->dyn_size);
	}
	if (st & PECS_SAMPLE_REGS_INTR)
		p = take_regs(p, end, &out->intr_abi, out->intr);
	if (!p)
		return -EBADMSG;
	out->size = (size_t)(p - (const uint8_t *)rec);
	return 0;
}

/* Samples ~50 ms of this thread's CPU at 1 ms, spent in marked_loop(); check() judges
 * each sample. 50 ms: on a machine whose cores are busy, 20 ms once gave 2 samples, none
 * in the loop. */
static void sample_loop(struct pecs_t *t, uint64_t st, struct run *run,
			void (*check)(const struct parsed *, struct run *))
{
#if defined(__x86_64__)
	const struct pecs_record_header *rec;
	struct pecs_budget b;
	struct pecs_ring r;
	struct pecs_attr a;
	struct parsed ps;
	uint64_t start, now, lost = 0;
	volatile uint64_t mark[4];
	int fd, ret;

	for (int i = 0; i < 4; i++)
		mark[i] = stack_mark[i];

	pecs_sampler_attr(t, &(const struct pecs_sampler_opts){ .period_ns = 1000000,
							     .sample_type = st }, &a);
	a.sample_regs_user = st & PECS_SAMPLE_REGS_USER ? MASK : 0;
	a.sample_regs_intr = st & PECS_SAMPLE_REGS_INTR ? MASK : 0;
	a.sample_stack_user = st & PECS_SAMPLE_STACK_USER ? STACK_BYTES : 0;
	fd = pecs_open(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, fd, "TASK_CLOCK sampler with sample_type %#llx",
		      (unsigned long long)st);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 64, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_event_value(t, fd, &start));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_budget_start(&b, 5000);
	do {
		marked_loop(2000000, mark, &run->f);
		PECS_CHECK_OK(t, pecs_event_value(t, fd, &now));
	} while (now - start < 50000000ull && pecs_budget_left(&b));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		if (rec->type == PECS_RECORD_LOST) {
			PECS_CHECK_OK(t, pecs_ring_lost_ok(rec, NULL, 0, &lost));
			continue;
		}
		if (rec->type != PECS_RECORD_SAMPLE)
			continue;
		PECS_CHECK_OK(t, parse(rec, st, &ps));
		PECS_CHECK(t, ps.size == rec->size, "a sample of %u bytes whose fields take %zu",
			   (unsigned)rec->size, ps.size);
		run->samples++;
		if (ps.ip >= run->f.lo && ps.ip < run->f.hi)
			run->in_loop++;
		check(&ps, run);
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, run->in_loop > 0, "none of %d samples (%llu lost; %llu ns of the event's "
		   "CPU at 1 ms, nearly all of it in the loop at %#llx..%#llx) has its IP there",
		   run->samples, (unsigned long long)lost, (unsigned long long)(now - start),
		   (unsigned long long)run->f.lo, (unsigned long long)run->f.hi);
	PECS_CHECK(t, run->fails == 0, "%d of %d samples were wrong; the first: %s", run->fails,
		   run->samples, run->first);
#else
	(void)st, (void)run, (void)check;
	PECS_ENV_SKIP(t, "the register numbers and the loop are x86-64's");
#endif
}

/* The first wrong sample is kept with its values; the run counts the rest. */
#define SAMPLE_CHECK(run, cond, ...)                                                  \
	do {                                                                             \
		if (!(cond) && (run)->fails++ == 0)                                      \
			snprintf((run)->first, sizeof((run)->first), __VA_ARGS__);       \
	} while (0)

static void check_regs(const uint64_t *regs, const struct parsed *ps,
		       struct run *run, const char *what)
{
	static const int at[MARKS] = { R_BX, R_R12, R_R13, R_R14, R_R15 };
	int in_loop = ps->ip >= run->f.lo && ps->ip < run->f.hi;

	SAMPLE_CHECK(run, regs[R_IP] == ps->ip, "%s: IP register %#llx, sample ip %#llx",
		     what, (unsigned long long)regs[R_IP], (unsigned long long)ps->ip);
	if (!in_loop)
		return;
	for (int i = 0; i < MARKS; i++)
		SAMPLE_CHECK(run, regs[at[i]] == marks[i],
			     "%s: register %d of the mask is %#llx in the loop, expected %#llx",
			     what, at[i], (unsigned long long)regs[at[i]],
			     (unsigned long long)marks[i]);
	SAMPLE_CHECK(run, regs[R_SP] == run->f.sp, "%s: SP %#llx in the loop, expected %#llx",
		     what, (unsigned long long)regs[R_SP], (unsigned long long)run->f.sp);
}

static void check_user(const struct parsed *ps, struct run *run)
{
	SAMPLE_CHECK(run, ps->abi == ABI_64, "REGS_USER abi %llu, expected 2 (ABI_64)",
		     (unsigned long long)ps->abi);
	if (ps->abi == ABI_64)
		check_regs(ps->regs, ps, run, "REGS_USER");
}

PECS_CASE("Required.Record.RegsUser.ValuesInMaskOrder", "mmap,sampling", "REC-SAMPLE-REGS-USER-ABI64")
{
	struct run run = { 0 };

	sample_loop(t, PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_REGS_USER, &run,
		    check_user);
}

static void check_stack(const struct parsed *ps, struct run *run)
{
	uint64_t off = run->f.mark_at - run->f.sp;

	SAMPLE_CHECK(run, ps->abi == ABI_64 && ps->stack_size == STACK_BYTES &&
		     ps->dyn_size <= STACK_BYTES,
		     "abi %llu, stack size %llu, dyn_size %llu: expected abi 2, size %u and "
		     "dyn_size at most that", (unsigned long long)ps->abi,
		     (unsigned long long)ps->stack_size, (unsigned long long)ps->dyn_size,
		     STACK_BYTES);
	if (!(ps->ip >= run->f.lo && ps->ip < run->f.hi) || ps->stack_size != STACK_BYTES)
		return;
	SAMPLE_CHECK(run, ps->regs[R_SP] == run->f.sp && off + sizeof(stack_mark) <=
		     ps->dyn_size && !memcmp(ps->stack + off, stack_mark, sizeof(stack_mark)),
		     "in the loop (SP %#llx, expected %#llx): the marker %llu bytes above SP is "
		     "not in the %llu bytes copied", (unsigned long long)ps->regs[R_SP],
		     (unsigned long long)run->f.sp, (unsigned long long)off,
		     (unsigned long long)ps->dyn_size);
}

PECS_CASE("Required.Record.StackUser.BytesFromSampledSp", "mmap,sampling", "REC-SAMPLE-STACK-USER-COPY")
{
	struct run run = { 0 };

	sample_loop(t, PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_REGS_USER |
		    PECS_SAMPLE_STACK_USER, &run, check_stack);
}

static void check_intr(const struct parsed *ps, struct run *run)
{
	check_user(ps, run);
	SAMPLE_CHECK(run, ps->intr_abi == ps->abi &&
		     !memcmp(ps->intr, ps->regs, sizeof(ps->regs)),
		     "REGS_INTR (abi %llu, IP %#llx, BX %#llx) differs from REGS_USER (abi %llu, "
		     "IP %#llx, BX %#llx) in a user-mode sample",
		     (unsigned long long)ps->intr_abi, (unsigned long long)ps->intr[R_IP],
		     (unsigned long long)ps->intr[R_BX], (unsigned long long)ps->abi,
		     (unsigned long long)ps->regs[R_IP], (unsigned long long)ps->regs[R_BX]);
}

PECS_CASE("Required.Record.RegsIntr.UserModeSampleIsUserRegs", "mmap,sampling",
	  "REC-SAMPLE-REGS-INTR-ABI64")
{
	struct run run = { 0 };

	sample_loop(t, PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_REGS_USER |
		    PECS_SAMPLE_STACK_USER | PECS_SAMPLE_REGS_INTR, &run, check_intr);
}
