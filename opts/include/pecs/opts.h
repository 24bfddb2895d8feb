/* One rule for size-versioned structs: a struct whose first member is `size_t size`, set
 * by whoever built it to sizeof the struct as that side's headers declare it.
 *
 * Both sides may be older or newer than each other:
 *   - a struct smaller than its first version (min_size) is refused: -EINVAL;
 *   - an older caller's struct is accepted; the fields it does not have take defaults;
 *   - a newer caller's struct is accepted when every byte past what we know is zero
 *     (it asked for nothing we would ignore); otherwise -E2BIG;
 *   - structs we fill for the caller get min(its size, ours) bytes, and the bytes it has
 *     beyond ours are zeroed: a field we do not know reads as "not reported".
 * A struct over PECS_OPTS_MAX bytes is not a versioned struct at all: -E2BIG.
 * docs/implementing.md states the rule for implementers. */
#ifndef PECS_OPTS_H
#define PECS_OPTS_H

#include <stddef.h>
#include <string.h>

#define PECS_OPTS_MAX 4096

/* Size of TYPE up to and including FIELD: the min_size of the version that ended there. */
#define PECS_OPTS_SIZE_TO(TYPE, FIELD) \
	(offsetof(struct TYPE, FIELD) + sizeof(((struct TYPE *)0)->FIELD))

/* Declares NAME, a struct TYPE with .size set and every other byte zero (padding too, so
 * a newer callee's zero-tail check cannot trip on it), then the designated initialisers
 * given: PECS_OPTS(ref_ring_opts, o, .pages = 4); */
#define PECS_OPTS(TYPE, NAME, ...)                                                 \
	struct TYPE NAME = ({                                                      \
		memset(&NAME, 0, sizeof(struct TYPE));                             \
		(struct TYPE){ .size = sizeof(struct TYPE), __VA_ARGS__ };         \
	})

/* The checks pecs_opts_load() makes, for a struct read in place (a vtable): 0, -EINVAL
 * (NULL or below min_size) or -E2BIG (a non-zero byte past ours_size, or too large). */
int pecs_opts_check(const void *caller, size_t ours_size, size_t min_size);

/* Reads a caller's struct into ours. ours holds the defaults on entry and ours_size is
 * sizeof it; min_size is the first version's size. On success ours has the caller's
 * fields over the defaults and its size set to ours_size. 0, -EINVAL (caller NULL or
 * smaller than min_size) or -E2BIG (a non-zero byte past ours, or over PECS_OPTS_MAX);
 * ours is left untouched on error. */
int pecs_opts_load(void *ours, size_t ours_size, const void *caller, size_t min_size);

/* Writes our filled struct (ours_size bytes, size member included) into the caller's
 * struct, which says its own size: its size member is kept, the rest gets ours up to
 * its size and zeroes past ours. 0, -EINVAL (caller NULL or smaller than min_size) or
 * -E2BIG (over PECS_OPTS_MAX). */
int pecs_opts_store(void *caller, const void *ours, size_t ours_size, size_t min_size);

/* The size a caller's struct claims (its first member). */
static inline size_t pecs_opts_size(const void *caller)
{
	size_t n;

	memcpy(&n, caller, sizeof(n));
	return n;
}

#endif /* PECS_OPTS_H */
