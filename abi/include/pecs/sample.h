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
};

#endif /* PECS_SAMPLE_H */
