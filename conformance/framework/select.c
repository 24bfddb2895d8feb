/* Case selection by id globs, as --filter and Bazel's --test_filter give them. */
#include <fnmatch.h>
#include <string.h>

#include "runner.h"

int pecs_filter_match(const char *filter, const char *id)
{
	if (!filter || !*filter)
		return 1;
	int any_positive = 0, included = 0;
	const char *p = filter;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char pat[512];
		if (n >= sizeof(pat))
			n = sizeof(pat) - 1;
		memcpy(pat, p, n);
		pat[n] = 0;
		if (pat[0] == '-') {
			if (fnmatch(pat + 1, id, 0) == 0)
				return 0;
		} else if (pat[0]) {
			any_positive = 1;
			/* A bare prefix such as "Required.Read" selects its subtree too. */
			size_t pl = strlen(pat);
			if (fnmatch(pat, id, 0) == 0 ||
			    (!strpbrk(pat, "*?[") && strncmp(id, pat, pl) == 0 &&
			     (id[pl] == '.' || id[pl] == 0)))
				included = 1;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return any_positive ? included : 1;
}
