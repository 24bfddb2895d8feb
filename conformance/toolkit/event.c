#include "pecs/toolkit/event.h"

#include <errno.h>

void pecs_sampler_attr(struct pecs_t *t, const struct pecs_sampler_opts *o,
		       struct pecs_attr *attr)
{
	pecs_attr_sampling(t, attr, PECS_SW_TASK_CLOCK,
			   o->period_ns ? o->period_ns : PECS_SAMPLER_PERIOD_NS, o->sample_type);
	attr->read_format = o->read_format;
	attr->wakeup_events = o->wakeup_events;
	attr->flags |= o->attr_flags;
	/* The event counts user time only, and 6.12 asks for privilege when a chain may
	 * reach the kernel (perf_event_paranoid 2). */
	if (o->sample_type & PECS_SAMPLE_CALLCHAIN)
		attr->flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
}

static int sampler_cpu(const struct pecs_sampler_opts *o)
{
	return o->flags & PECS_SAMPLER_ON_CPU ? o->cpu : -1;
}

static int sampler_group(const struct pecs_sampler_opts *o)
{
	return o->flags & PECS_SAMPLER_IN_GROUP ? o->group_fd : -1;
}

int pecs_sampler_open(struct pecs_t *t, const struct pecs_sampler_opts *o)
{
	struct pecs_attr a;

	pecs_sampler_attr(t, o, &a);
	return pecs_open(t, &a, 0, sampler_cpu(o), sampler_group(o), 0);
}

int pecs_sampler_safe(struct pecs_t *t, const char *file, int line,
		      const struct pecs_sampler_opts *o)
{
	int fd = pecs_sampler_open(t, o);

	if (fd < 0)
		pecs_end(t, PECS_FAIL, file, line,
			 "perf_event_open of a TASK_CLOCK sampler (period %llu ns, sample_type "
			 "%#llx, read_format %#llx, flags %#llx, cpu %d, group_fd %d) failed: %s",
			 (unsigned long long)(o->period_ns ? o->period_ns : PECS_SAMPLER_PERIOD_NS),
			 (unsigned long long)o->sample_type, (unsigned long long)o->read_format,
			 (unsigned long long)o->attr_flags, sampler_cpu(o), sampler_group(o),
			 pecs_retname(fd));
	return fd;
}

int pecs_event_id(struct pecs_t *t, int fd, uint64_t *id)
{
	*id = 0;
	return pecs_ioctl(t, fd, PECS_IOC_ID, (unsigned long)id);
}

int pecs_event_value(struct pecs_t *t, int fd, uint64_t *value)
{
	uint64_t buf[PECS_READ_SIZE_MAX / 8];
	ssize_t n = pecs_read(t, fd, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	if (n < 8)
		return -EBADMSG;
	*value = buf[0];
	return 0;
}
