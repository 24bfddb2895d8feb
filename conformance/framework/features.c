/* A case's feature names and behaviour ids, checked against the closed lists. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

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
