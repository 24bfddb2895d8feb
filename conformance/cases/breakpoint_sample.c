#define _GNU_SOURCE
/* A breakpoint with sample_period 1 samples each access (perf_bp_event ->
 * perf_swevent_event): its SAMPLE_ADDR is the breakpoint's bp_addr
 * (perf_sample_data_init(&sample, bp->attr.bp_addr, 0)) and its IP the registers of the
 * debug exception. On x86 a data breakpoint is a trap, raised after the access, so the IP
 * is the instruction after it; an execute breakpoint is a fault, raised before, so the IP
 * is the breakpoint's address. With sigtrap each access sends SIGTRAP to the thread, with
 * si_addr the same bp_addr (perf_sigtrap, from event->pending_addr). */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/toolkit/signal.h"
#include "pecs/toolkit/breakpoint.h"
#include "pecs/toolkit/ring.h"

#define ACCESSES 8
#define SAMPLE_TYPE (PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_ADDR)

static volatile uint64_t watched __attribute__((aligned(8)));

/* One 8-byte store to p; the address of the instruction after it. */
static uint64_t store_then_next_ip(volatile uint64_t *p, uint64_t v)
{
	uint64_t next;

#if defined(__x86_64__)
	__asm__ volatile("movq %2, (%1)\n\t"
			 "1: leaq 1b(%%rip), %0"
			 : "=&r"(next)
			 : "r"(p), "r"(v)
			 : "memory");
#else
	*p = v;
	next = 0;
#endif
	return next;
}

__attribute__((noinline)) static void bp_target(void)
{
	__asm__ volatile("" ::: "memory");
}

static void check_samples(struct pecs_t *t, struct pecs_ring *r, uint64_t addr,
			  const uint64_t *ips)
{
	const struct pecs_record_header *rec;
	struct pecs_parsed_sample s;
	int n = 0, ret;

	while ((ret = pecs_ring_next(r, &rec)) > 0) {
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE, "record %d", n);
		PECS_CHECK_EQ(t, rec->misc, PECS_MISC_USER, "sample %d", n);
		PECS_CHECK_OK(t, pecs_parse_sample(rec, SAMPLE_TYPE, 0, &s), "sample %d", n);
		PECS_CHECK(t, n < ACCESSES, "more than %d samples", ACCESSES);
		PECS_CHECK_EQ(t, s.tid, pecs_gettid(), "sample %d", n);
		PECS_CHECK_EQ(t, s.addr, addr, "sample %d: SAMPLE_ADDR is bp_addr", n);
		PECS_CHECK_EQ(t, s.ip, ips[n], "sample %d: the IP of the debug exception", n);
		n++;
	}
	PECS_CHECK_OK(t, ret, "the ring after %d samples", n);
	PECS_CHECK_EQ(t, n, ACCESSES, "samples of %d accesses", ACCESSES);
}

PECS_CASE("Required.Breakpoint.Sample.WriteIpAfterTheStore", "mmap,sampling",
	  "BP-SAMPLE-ADDR-IP")
{
	uint64_t ips[ACCESSES];
	struct pecs_attr a;
	struct pecs_ring r;
	int fd;

#if !defined(__x86_64__)
	PECS_ENV_SKIP(t, "the IP of a data breakpoint's sample is x86-64's trap semantics");
#endif
	PECS_BP_REQUIRE_FIRING(t, PECS_BP_W);
	pecs_bp_attr(t, &a, PECS_BP_W, &watched, 8);
	a.sample_period = 1;
	a.sample_type = SAMPLE_TYPE;
	fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	for (int n = 0; n < ACCESSES; n++)
		ips[n] = store_then_next_ip(&watched, n);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	check_samples(t, &r, (uint64_t)(uintptr_t)&watched, ips);
}

PECS_CASE("Required.Breakpoint.Sample.ExecuteIpIsTheAddress", "mmap,sampling",
	  "BP-SAMPLE-ADDR-IP")
{
	void (*volatile fn)(void) = bp_target;
	uint64_t ips[ACCESSES];
	struct pecs_attr a;
	struct pecs_ring r;
	int fd;

	PECS_BP_REQUIRE_FIRING(t, PECS_BP_X);
	pecs_bp_attr(t, &a, PECS_BP_X, (const volatile void *)(uintptr_t)fn, sizeof(long));
	a.sample_period = 1;
	a.sample_type = SAMPLE_TYPE;
	fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 8, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	for (int n = 0; n < ACCESSES; n++) {
		fn();
		ips[n] = (uint64_t)(uintptr_t)fn;
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	check_samples(t, &r, (uint64_t)(uintptr_t)fn, ips);
}

#define TRAP_PERF_CODE 6 /* TRAP_PERF, <asm-generic/siginfo.h> */
#define SIG_DATA 0xb7eacc0ffeeull
/* siginfo's _sigfault: si_addr at 16, then _perf: data (unsigned long) at 24, type (u32)
 * at 32; the C library's siginfo_t does not name the last two. */
#define PERF_DATA_OFF 24
#define PERF_TYPE_OFF 32

static volatile sig_atomic_t traps;
static struct {
	int code;
	pid_t tid;
	uint64_t addr, data;
	uint32_t type;
} last;

static void on_trap(int signo, siginfo_t *si, void *uc)
{
	(void)signo;
	(void)uc;
	last.code = si->si_code;
	last.tid = gettid();
	last.addr = (uint64_t)(uintptr_t)si->si_addr;
	memcpy(&last.data, (const char *)si + PERF_DATA_OFF, sizeof(last.data));
	memcpy(&last.type, (const char *)si + PERF_TYPE_OFF, sizeof(last.type));
	traps++;
}

/* A write breakpoint on watched that traps each write into on_trap(), for the case. */
static void trap_on_writes(struct pecs_t *t, struct pecs_attr *a)
{
	PECS_BP_REQUIRE_FIRING(t, PECS_BP_W);
	pecs_catch_signal(t, SIGTRAP, on_trap);
	pecs_bp_attr(t, a, PECS_BP_W, &watched, 8);
	a->sample_period = 1;
	a->flags |= PECS_ATTR_SIGTRAP | PECS_ATTR_REMOVE_ON_EXEC;
	a->sig_data = SIG_DATA;
}

/* Each write traps before the next statement runs: the signal is sent on the way back
 * to user space from the debug exception, to the thread that wrote. */
PECS_CASE("Required.Breakpoint.Sigtrap.EachWriteTrapsWithTheAddress", "sampling",
	  "BP-SIGTRAP-ADDR")
{
	struct pecs_attr a;
	int fd;

	trap_on_writes(t, &a);
	fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
	traps = 0;
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	for (int n = 1; n <= ACCESSES; n++) {
		watched = n;
		PECS_CHECK_EQ(t, traps, n, "SIGTRAPs right after write %d", n);
		PECS_CHECK_EQ(t, last.code, TRAP_PERF_CODE, "si_code of trap %d", n);
		PECS_CHECK_EQ(t, last.tid, pecs_gettid(), "the thread of trap %d", n);
		PECS_CHECK_EQ(t, last.addr, (uint64_t)(uintptr_t)&watched, "si_addr of trap %d", n);
		PECS_CHECK_EQ(t, last.data, SIG_DATA, "si_perf_data of trap %d", n);
		PECS_CHECK_EQ(t, last.type, PECS_TYPE_BREAKPOINT, "si_perf_type of trap %d", n);
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	watched = 0;
	PECS_CHECK_EQ(t, traps, ACCESSES, "SIGTRAPs after the event was disabled");
}

static volatile uint64_t moved_to __attribute__((aligned(8)));

/* After IOC_MODIFY_ATTRIBUTES moves the breakpoint and gives it new sig_data, the traps
 * carry the new address and data. */
PECS_CASE("Required.Breakpoint.Sigtrap.FollowsModifyAttributes", "sampling",
	  "BP-SIGTRAP-ADDR")
{
	struct pecs_attr a;
	int fd;

	trap_on_writes(t, &a);
	a.flags &= ~PECS_ATTR_DISABLED;
	fd = PECS_BP_OPEN(t, &a, 0, -1, -1);
	traps = 0;
	a.config1 = (uint64_t)(uintptr_t)&moved_to;
	a.sig_data = SIG_DATA + 1;
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)&a));
	watched = 1;
	PECS_CHECK_EQ(t, traps, 0, "SIGTRAPs after a write to the old address");
	moved_to = 1;
	PECS_CHECK_EQ(t, traps, 1, "SIGTRAPs after a write to the new address");
	PECS_CHECK_EQ(t, last.addr, (uint64_t)(uintptr_t)&moved_to, "si_addr");
	PECS_CHECK_EQ(t, last.data, SIG_DATA + 1, "si_perf_data");
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
}
