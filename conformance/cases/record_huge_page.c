/* PERF_SAMPLE_CODE_PAGE_SIZE where the ip is on a huge page: a transparent huge page
 * (MADV_HUGEPAGE) holding a tiny counting loop, run in turns with the suite's ordinary
 * text, so one sample stream has ips on 2 MiB and on base pages. perf_get_page_size()
 * walks the page tables at the overflow: a PMD-mapped page gives the PMD size. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "pecs/toolkit/host.h"
#include "pecs/toolkit/ring.h"
#include "pecs/toolkit/wait.h"
#include "pecs/toolkit/safe.h"

#define PERIOD_NS 100000ull
#define TURN_NS (20 * 1000000ull)
#define HUGE (2u << 20)

/* loop: count down the first argument, then return. */
#if defined(__x86_64__)
static const unsigned char loop_code[] = {
	0x48, 0xff, 0xcf, /* dec %rdi */
	0x75, 0xfb,       /* jnz loop */
	0xc3,             /* ret */
};
#elif defined(__aarch64__)
static const unsigned char loop_code[] = {
	0x00, 0x04, 0x00, 0xf1, /* subs x0, x0, #1 */
	0xe1, 0xff, 0xff, 0x54, /* b.ne loop */
	0xc0, 0x03, 0x5f, 0xd6, /* ret */
};
#endif

struct huge_map {
	void *base;
	size_t len;
};

static void unmap(void *arg)
{
	struct huge_map *m = arg;

	munmap(m->base, m->len);
}

/* 1 when the mapping holding addr is PMD-mapped in full (AnonHugePages covers it). */
static int fully_pmd_mapped(uint64_t addr)
{
	char line[1024], key[64];
	uint64_t lo = 0, hi = 0, kb, huge_kb = 0;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t a, b;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*4[rwxsp-] ", &a, &b) == 2) {
			if (in)
				break;
			in = addr >= a && addr < b;
			lo = a;
			hi = b;
		} else if (in && sscanf(line, "%63[^:]: %" SCNu64, key, &kb) == 2 &&
			   !strcmp(key, "AnonHugePages")) {
			huge_kb = kb;
		}
	}
	fclose(f);
	return in && huge_kb * 1024 == hi - lo;
}

/* The loop copied onto a transparent huge page of its own, or NULL with why. */
static void *huge_loop(struct pecs_t *t, struct huge_map *m, const char **why)
{
	uint8_t *p, *aligned;

	unsigned long long pmd = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");

	if (f) {
		if (fscanf(f, "%llu", &pmd) != 1)
			pmd = 0;
		fclose(f);
	}
	if (pmd != HUGE) {
		*why = "no transparent huge pages of 2 MiB (hpage_pmd_size)";
		return NULL;
	}
	m->len = 2 * HUGE;
	m->base = PECS_SAFE_MMAP(t, NULL, m->len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pecs_defer(t, unmap, m);
	p = m->base;
	aligned = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (madvise(aligned, HUGE, MADV_HUGEPAGE)) {
		*why = "madvise(MADV_HUGEPAGE) failed: no transparent huge pages";
		return NULL;
	}
	memcpy(aligned, loop_code, sizeof(loop_code));
	PECS_SAFE_SYS(t, mprotect(aligned, HUGE, PROT_READ | PROT_EXEC));
	__builtin___clear_cache((char *)aligned, (char *)aligned + sizeof(loop_code));
	if (!fully_pmd_mapped((uint64_t)(uintptr_t)aligned)) {
		*why = "the host gave no transparent huge page for a MADV_HUGEPAGE mapping "
		       "(smaps AnonHugePages short of the mapping)";
		return NULL;
	}
	return aligned;
}

PECS_CASE("Required.Record.Sample.CodePageSizeOnHugePage", "mmap,sampling",
	  "REC-SAMPLE-CODE-PAGE-SIZE-HUGE")
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	PECS_ENV_SKIP(t, "the loop copied onto a huge page is written for x86-64 and arm64");
#else
	const struct pecs_record_header *rec;
	struct huge_map m;
	struct pecs_attr a;
	struct pecs_ring r;
	const char *why = "";
	uint64_t w[2], id, lost = 0, lo;
	int fd, ret, on_huge = 0, on_base = 0;
	void (*loop)(uint64_t);
	void *code = huge_loop(t, &m, &why);

	if (!code)
		PECS_ENV_SKIP(t, "%s", why);
	*(void **)&loop = code;
	lo = (uint64_t)(uintptr_t)code;
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, PERIOD_NS,
			   PECS_SAMPLE_IP | PECS_SAMPLE_CODE_PAGE_SIZE);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	PECS_CHECK_OK(t, pecs_event_id(t, fd, &id));
	PECS_CHECK_OK(t, pecs_ring_map(t, fd, 64, PROT_READ | PROT_WRITE, &r));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	/* Turns, so a lookup that kept the page size of one mapping for the other fails. */
	for (int turn = 0; turn < 4; turn++) {
		uint64_t end = pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) + TURN_NS;

		if (turn % 2)
			pecs_burn_user(TURN_NS);
		else
			while (pecs_clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
				loop(100000);
	}
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	while ((ret = pecs_ring_next(&r, &rec)) > 0) {
		uint64_t size, alt;

		if (rec->type == PECS_RECORD_LOST) {
			PECS_CHECK(t, pecs_ring_lost_ok(rec, &id, 1, &lost) == 0, "a malformed LOST");
			continue;
		}
		PECS_CHECK_EQ(t, rec->type, PECS_RECORD_SAMPLE);
		PECS_CHECK_EQ(t, rec->size, sizeof(*rec) + sizeof(w));
		memcpy(w, rec + 1, sizeof(w));
		if (w[0] >= lo && w[0] < lo + HUGE) {
			on_huge++;
			PECS_CHECK(t, w[1] == HUGE, "ip %" PRIx64 " on the huge page: code page "
				   "size %" PRIu64 ", expected %u", w[0], w[1], HUGE);
			continue;
		}
		pecs_host_page_size(w[0], &size, &alt);
		if (size == 0)
			continue; /* the page went between the sample and this look */
		on_base++;
		PECS_CHECK(t, w[1] == size || w[1] == alt, "ip %" PRIx64 ": code page size %"
			   PRIu64 ", the mapping's is %" PRIu64, w[0], w[1], size);
	}
	PECS_CHECK_OK(t, ret);
	PECS_CHECK(t, on_huge > 0 && on_base > 0, "%d samples on the huge page and %d "
		   "elsewhere in 80 ms of CPU at 100 us", on_huge, on_base);
#endif
}
