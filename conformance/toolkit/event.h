/* Opening and asking one event from a case: the sampler most ring, poll and ioctl cases
 * open, and the two questions cases ask of any event (its id, its value).
 *
 * Two layers, as everywhere in the toolkit (docs/implementing.md, "The case toolkit"):
 * pecs_sampler_open() returns the fd or -errno, for a case that tests the refusal;
 * PECS_SAMPLER() is the same open that must succeed, and fails the case otherwise.
 */
#ifndef PECS_TOOLKIT_EVENT_H
#define PECS_TOOLKIT_EVENT_H

#include <stdint.h>

#include "pecs/case.h"

/* The period a sampler gets when the case names none: short enough for a few samples in
 * a millisecond of CPU time, long enough that a busy ring does not lose records. */
#define PECS_SAMPLER_PERIOD_NS 100000ull

/* A TASK_CLOCK sampler on the calling thread, disabled and user-only as
 * pecs_attr_sampling() makes it. Every field is optional: a designated initializer names
 * the ones a case cares about and the rest are zero. sample_id_all stays off, so a LOST
 * record is its bare 24 bytes. */
struct pecs_sampler_opts {
	uint64_t period_ns;     /* 0 takes PECS_SAMPLER_PERIOD_NS */
	uint64_t sample_type;   /* with CALLCHAIN the chain is user-only too */
	uint64_t read_format;
	uint64_t attr_flags;    /* PECS_ATTR_* added to the defaults (INHERIT, ...) */
	uint32_t wakeup_events;
	unsigned int flags;     /* PECS_SAMPLER_ON_CPU, PECS_SAMPLER_IN_GROUP */
	int cpu;                /* with PECS_SAMPLER_ON_CPU; else any CPU (-1) */
	int group_fd;           /* with PECS_SAMPLER_IN_GROUP; else its own leader */
};

#define PECS_SAMPLER_ON_CPU 0x1u
#define PECS_SAMPLER_IN_GROUP 0x2u

/* The attr the sampler of o opens with, for a case that changes it further. */
void pecs_sampler_attr(struct pecs_t *t, const struct pecs_sampler_opts *o,
		       struct pecs_attr *attr);

/* Open the sampler of o: the fd, or -errno. */
int pecs_sampler_open(struct pecs_t *t, const struct pecs_sampler_opts *o);

/* Open a sampler that must open: the fd, or the case FAILs at the caller's line with the
 * options and the errno. The options are designated initializers:
 *   int fd = PECS_SAMPLER(t, .sample_type = PECS_SAMPLE_TID, .read_format = rf);
 *   int fd = PECS_SAMPLER(t);
 */
#define PECS_SAMPLER(t, ...)                                                      \
	pecs_sampler_safe((t), __FILE__, __LINE__,                                \
			  &(const struct pecs_sampler_opts){__VA_ARGS__})
int pecs_sampler_safe(struct pecs_t *t, const char *file, int line,
		      const struct pecs_sampler_opts *o);

/* PERF_EVENT_IOC_ID into *id (0 when the call fails). 0 or -errno. */
int pecs_event_id(struct pecs_t *t, int fd, uint64_t *id);

/* The first u64 a read() returns (the value of a non-group read_format). 0, -errno, or
 * -EBADMSG for a read shorter than 8 bytes. */
int pecs_event_value(struct pecs_t *t, int fd, uint64_t *value);

#endif /* PECS_TOOLKIT_EVENT_H */
