/* Tables that must keep up with the ABI headers: when a PECS_SAMPLE_* or PECS_FORMAT_*
 * bit is added below its *_MAX, the case whose table has no row for it turns BROKEN
 * instead of passing without looking at the new bit (as perf's sample-parsing test
 * does). */
#ifndef PECS_TOOLKIT_COVERAGE_H
#define PECS_TOOLKIT_COVERAGE_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/case.h"

/* SAFE-layer checks of the suite itself (safe.h): each ends the case BROKEN at the
 * caller's line, and is a macro for that line. */

/* BROKEN unless the n rows (stride bytes apart, each with a uint64_t mask at offset off)
 * hold every combination of the bits below max outside `fixed`, each exactly once. */
#define pecs_cover_combinations(t, ...) \
	pecs_cover_combinations_at((t), __FILE__, __LINE__, __VA_ARGS__)
void pecs_cover_combinations_at(struct pecs_t *t, const char *file, int line, const char *what,
				const void *rows, size_t n, size_t stride, size_t off,
				uint64_t max, uint64_t fixed);

/* BROKEN unless every bit below max is in covered. */
#define pecs_cover_bits(t, ...) pecs_cover_bits_at((t), __FILE__, __LINE__, __VA_ARGS__)
void pecs_cover_bits_at(struct pecs_t *t, const char *file, int line, const char *what,
			uint64_t covered, uint64_t max);

/* A read-layout table (rows with a uint64_t rf) covers every read_format outside fixed. */
#define PECS_FORMAT_TABLE_COVERS(t, rows, fixed)                                          \
	pecs_cover_combinations((t), #rows, (rows), sizeof(rows) / sizeof((rows)[0]),      \
				sizeof((rows)[0]), offsetof(__typeof__((rows)[0]), rf),    \
				PECS_FORMAT_MAX, (fixed))

#endif /* PECS_TOOLKIT_COVERAGE_H */
