/* One decoded sample: what a profiler stream yields and what the record encoder writes.
 *
 * Shared by the reference engine (its stream readers produce it, its encoder consumes it),
 * the suite (a case hands one to an implementation's inject_sample) and the vectors.
 * Size-versioned like the other pecs structs: `size` is sizeof as the caller built it.
 */
#ifndef PECS_SAMPLE_H
#define PECS_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/abi.h" /* misc holds a PECS_MISC_* cpumode */

struct pecs_sample {
	size_t size;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint16_t misc;         /* cpumode; 0 means PECS_MISC_USER */
	uint64_t period;       /* 0: the event's current period */
	uint64_t addr;
	uint32_t nr_ips;       /* ips[0] is the sampled IP, the rest return addresses */
	const uint64_t *ips;
	/* Appended: PERF_SAMPLE_RAW's payload, raw_size bytes (raw_size + 4 a multiple of 8,
	 * as the kernel pads it); NULL/0 for an event that has none. */
	const void *raw;
	uint32_t raw_size;
	/* Appended: the sampled thread's user registers, for REGS_USER and REGS_INTR.
	 * regs_abi as perf_reg_abi() names it (PECS_SAMPLE_REGS_ABI_*); NONE (0) when none
	 * were captured, and then no stack either. regs[i] is register number i of the
	 * architecture's perf numbering (x86-64: enum perf_event_x86_regs), nr_regs of them;
	 * the encoder picks the mask's. */
	uint32_t regs_abi;
	uint32_t nr_regs;
	const uint64_t *regs;
	/* Appended: user stack bytes copied from the sampled SP upwards (STACK_USER), as
	 * many as were readable up to what the event asked for: the record's dyn_size. */
	const void *stack;
	uint32_t stack_size;
};

/* perf_event.h's enum perf_sample_regs_abi. */
#define PECS_SAMPLE_REGS_ABI_NONE 0u
#define PECS_SAMPLE_REGS_ABI_32 1u
#define PECS_SAMPLE_REGS_ABI_64 2u

#endif /* PECS_SAMPLE_H */
