/* The closed list of feature names (docs/features.txt, compiled in by features_gen.sh).
 * A misspelt name would otherwise turn a case UNSUPPORTED, or an implementation's claim
 * into nothing, without a word. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

int pecs_feature_known(const char *name, size_t len)
{
	for (const char *const *f = pecs_known_features; *f; f++)
		if (strlen(*f) == len && memcmp(*f, name, len) == 0)
			return 1;
	return 0;
}

int pecs_case_features_check(const struct pecs_case *c, char *msg, size_t msglen)
{
	const char *p = c->features;

	while (p && *p) {
		size_t len = strcspn(p, ",");

		if (!pecs_feature_known(p, len)) {
			snprintf(msg, msglen, "case %s needs feature '%.*s', which docs/features.txt "
				 "does not list", c->id, (int)len, p);
			return -EINVAL;
		}
		p += len;
		p += *p == ',';
	}
	if (!c->behaviours || !*c->behaviours) {
		snprintf(msg, msglen, "case %s names no behaviour id (docs/behaviours.md)", c->id);
		return -EINVAL;
	}
	return 0;
}
