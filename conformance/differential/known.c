/* The divergences kept on purpose, read from docs/behaviours.md, where each has its row
 * and reason. A machine-readable line per entry:
 *
 *     <!-- differential: ID OWNER PATTERN -->
 *
 * OWNER is "kept" for a divergence ref keeps, or the name of whoever owns its fix;
 * PATTERN is an fnmatch(3) pattern over class keys (it may contain spaces). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "conformance/differential/diff.h"

#define MARK "<!-- differential: "

static int parse(const char *line, struct diff_known *k)
{
	const char *p = strstr(line, MARK);
	if (!p)
		return 0;
	p += strlen(MARK);
	const char *end = strstr(p, " -->");
	if (!end)
		return -EINVAL;
	char body[400];
	size_t n = (size_t)(end - p);
	if (n >= sizeof(body))
		return -EINVAL;
	memcpy(body, p, n);
	body[n] = '\0';
	int used = 0;
	memset(k, 0, sizeof(*k));
	if (sscanf(body, "%63s %31s %n", k->id, k->owner, &used) != 2 || !body[used])
		return -EINVAL;
	snprintf(k->pattern, sizeof(k->pattern), "%s", body + used);
	return 1;
}

int diff_known_load(const char *path, struct diff_known *k, int max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char line[1024];
	int n = 0, lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (n >= max)
			break;
		int r = parse(line, &k[n]);
		if (r < 0) {
			fprintf(stderr, "%s:%d: bad differential marker\n", path, lineno);
			fclose(f);
			return r;
		}
		n += r;
	}
	fclose(f);
	return n;
}

const struct diff_known *diff_known_match(const struct diff_known *k, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (fnmatch(k[i].pattern, key, 0) == 0)
			return &k[i];
	return NULL;
}
