/* The one check of a vtable before anything calls it, shared by every loader: the
 * runners, the differential and the interposer. */
#ifndef PECS_IMPL_CHECK_H
#define PECS_IMPL_CHECK_H

#include <stddef.h>

#include "pecs/impl.h"

extern const char *const pecs_known_features[]; /* docs/features.txt, NULL-terminated */
int pecs_feature_known(const char *name, size_t len);

/* 0 when impl can be used: a known size with zeroed bytes past what this build knows,
 * every mandatory entry, only known feature names. Else -EINVAL with why in msg. */
int pecs_impl_check(const struct pecs_impl *impl, char *msg, size_t msglen);

#endif /* PECS_IMPL_CHECK_H */
