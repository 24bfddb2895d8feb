/* The cases linked into this binary, found through the pecs_cases linker section. */
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* GNU ld and lld define these for any section whose name is a C identifier. Weak, so a
 * binary linked with no case at all still builds and reports an empty run. */
extern const struct pecs_case *const __start_pecs_cases[] __attribute__((weak));
extern const struct pecs_case *const __stop_pecs_cases[] __attribute__((weak));

static const struct pecs_case **sorted;
static size_t nsorted;

static int by_id(const void *a, const void *b)
{
	const struct pecs_case *const *x = a, *const *y = b;
	return strcmp((*x)->id, (*y)->id);
}

const struct pecs_case *const *pecs_registry(size_t *count)
{
	const struct pecs_case *const *start = __start_pecs_cases, *const *stop = __stop_pecs_cases;
	if (!sorted && start != stop) {
		size_t n = (size_t)(stop - start);
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted) {
			*count = 0;
			return NULL;
		}
		memcpy(sorted, start, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), by_id);
		nsorted = n;
	}
	*count = nsorted;
	return (const struct pecs_case *const *)sorted;
}

const struct pecs_case *pecs_registry_find(const char *id)
{
	size_t n;
	const struct pecs_case *const *all = pecs_registry(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i]->id, id) == 0)
			return all[i];
	return NULL;
}
