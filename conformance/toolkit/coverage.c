#include "pecs/toolkit/coverage.h"

#include <string.h>

void pecs_cover_combinations_at(struct pecs_t *t, const char *file, int line, const char *what,
				const void *rows, size_t n, size_t stride, size_t off,
				uint64_t max, uint64_t fixed)
{
	/* Bits are few (PECS_FORMAT_MAX is 1 << 5): walk every mask below max. */
	for (uint64_t mask = 0; mask < max; mask++) {
		if (mask & fixed)
			continue;
		size_t found = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t rf;
			memcpy(&rf, (const char *)rows + i * stride + off, sizeof(rf));
			found += rf == mask;
		}
		if (found != 1)
			pecs_end(t, PECS_BROKEN, file, line,
				 "%s has %zu rows for 0x%llx, not 1: a bit below 0x%llx has no "
				 "case yet", what, found, (unsigned long long)mask,
				 (unsigned long long)max);
	}
}

void pecs_cover_bits_at(struct pecs_t *t, const char *file, int line, const char *what,
			uint64_t covered, uint64_t max)
{
	for (uint64_t bit = 1; bit < max; bit <<= 1)
		if (!(covered & bit))
			pecs_end(t, PECS_BROKEN, file, line,
				 "%s does not cover bit 0x%llx (below 0x%llx): add a case for it "
				 "or say why none can exist", what, (unsigned long long)bit,
				 (unsigned long long)max);
}
