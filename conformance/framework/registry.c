/* The cases linked into this binary, found through two linker sections: pecs_cases holds
 * lone cases, pecs_case_tables the tables whose rows are cases. */
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* GNU ld and lld define these for any section whose name is a C identifier. Weak, so a
 * binary linked with no case at all still builds and reports an empty run. */
extern const struct pecs_case *const __start_pecs_cases[] __attribute__((weak));
extern const struct pecs_case *const __stop_pecs_cases[] __attribute__((weak));
extern const struct pecs_case_table *const __start_pecs_case_tables[] __attribute__((weak));
extern const struct pecs_case_table *const __stop_pecs_case_tables[] __attribute__((weak));

static const struct pecs_case **sorted;
static size_t nsorted;

static int by_id(const void *a, const void *b)
{
	const struct pecs_case *const *x = a, *const *y = b;
	return strcmp((*x)->id, (*y)->id);
}

/* One case per row of every table; made once, kept for the life of the process. */
static const struct pecs_case *row_cases(size_t *count)
{
	const struct pecs_case_table *const *start = __start_pecs_case_tables;
	const struct pecs_case_table *const *stop = __stop_pecs_case_tables;
	size_t n = 0, k = 0;
	for (const struct pecs_case_table *const *tb = start; tb != stop; tb++)
		n += (*tb)->count;
	*count = n;
	if (n == 0)
		return NULL;
	struct pecs_case *cases = calloc(n, sizeof(*cases));
	if (!cases) {
		*count = 0;
		return NULL;
	}
	for (const struct pecs_case_table *const *tb = start; tb != stop; tb++) {
		for (size_t i = 0; i < (*tb)->count; i++, k++) {
			const void *row = (const char *)(*tb)->rows + i * (*tb)->row_size;
			const struct pecs_row *head = row;
			cases[k] = (struct pecs_case){head->id, head->features, head->behaviours,
						      NULL, (*tb)->file, (*tb)->line,
						      (*tb)->row_fn, row};
		}
	}
	return cases;
}

const struct pecs_case *const *pecs_registry(size_t *count)
{
	const struct pecs_case *const *start = __start_pecs_cases, *const *stop = __stop_pecs_cases;
	if (!sorted) {
		size_t nrows, nlone = (size_t)(stop - start);
		const struct pecs_case *rows = row_cases(&nrows);
		if (nlone + nrows == 0) {
			*count = 0;
			return NULL;
		}
		sorted = malloc((nlone + nrows) * sizeof(*sorted));
		if (!sorted) {
			*count = 0;
			return NULL;
		}
		if (nlone)
			memcpy(sorted, start, nlone * sizeof(*sorted));
		for (size_t i = 0; i < nrows; i++)
			sorted[nlone + i] = &rows[i];
		nsorted = nlone + nrows;
		qsort(sorted, nsorted, sizeof(*sorted), by_id);
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
