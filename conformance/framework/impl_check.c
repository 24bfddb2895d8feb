/* Refusing a vtable the suite cannot read safely. */
#include <errno.h>
#include <stdio.h>

#include "pecs/impl.h"

int pecs_impl_check(const struct pecs_impl *impl, char *msg, size_t msglen)
{
	if (!impl) {
		snprintf(msg, msglen, "no implementation (NULL vtable)");
		return -EINVAL;
	}
	if (impl->size < offsetof(struct pecs_impl, host_facts)) {
		snprintf(msg, msglen,
			 "vtable size %zu is smaller than the first version's mandatory part (%zu)",
			 impl->size, offsetof(struct pecs_impl, host_facts));
		return -EINVAL;
	}
	if (impl->size > 65536) {
		snprintf(msg, msglen, "vtable size %zu is not a plausible struct size", impl->size);
		return -EINVAL;
	}
	/* Entries the suite does not know yet must be absent, or old suites would ignore
	 * behaviour the implementation depends on. */
	const unsigned char *bytes = (const unsigned char *)impl;
	for (size_t i = sizeof(struct pecs_impl); i < impl->size; i++) {
		if (bytes[i]) {
			snprintf(msg, msglen,
				 "vtable is %zu bytes and byte %zu, past the %zu this suite knows, is "
				 "not zero: rebuild the suite with a newer pecs/impl.h",
				 impl->size, i, sizeof(struct pecs_impl));
			return -EINVAL;
		}
	}
	if (!impl->name || !impl->open || !impl->close || !impl->read || !impl->ioctl ||
	    !impl->mmap || !impl->munmap || !impl->poll || !impl->setup || !impl->teardown) {
		snprintf(msg, msglen, "vtable '%s' lacks a mandatory entry (name, setup, teardown, "
			 "open, close, read, ioctl, mmap, munmap and poll are required)",
			 impl->name ? impl->name : "?");
		return -EINVAL;
	}
	return 0;
}
