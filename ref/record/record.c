/* Record encoding after kernel/events/core.c (Linux 6.12): perf_output_sample() for the
 * field order, perf_prepare_sample() for the values a software event writes where it has
 * nothing to report, __perf_event__output_id_sample() for the sample_id_all trailer and
 * __perf_event_read_size()/perf_read_{one,group}() for read layouts. */
#include <errno.h>
#include <string.h>

#include "pecs/opts.h"
#include "ref/record/record.h"
#include "record_regs.h"

/* Largest multiple of 8 a u16 header size can hold: every record length is one. */
#define RECORD_SIZE_MAX 65528u

/* The sample_type bits whose field is always a single u64 (or two u32 packed in one). */
#define FIXED_U64_FIELDS                                                                  \
	(PECS_SAMPLE_IDENTIFIER | PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME |   \
	 PECS_SAMPLE_ADDR | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID | PECS_SAMPLE_CPU |    \
	 PECS_SAMPLE_PERIOD | PECS_SAMPLE_RAW | PECS_SAMPLE_BRANCH_STACK |               \
	 PECS_SAMPLE_REGS_USER | PECS_SAMPLE_STACK_USER | PECS_SAMPLE_DATA_SRC |          \
	 PECS_SAMPLE_TRANSACTION | PECS_SAMPLE_REGS_INTR | PECS_SAMPLE_PHYS_ADDR |        \
	 PECS_SAMPLE_CGROUP | PECS_SAMPLE_DATA_PAGE_SIZE | PECS_SAMPLE_CODE_PAGE_SIZE |   \
	 PECS_SAMPLE_AUX)

/* WEIGHT and WEIGHT_STRUCT share one u64 (PERF_SAMPLE_WEIGHT_TYPE in the kernel). */
#define WEIGHT_TYPE (PECS_SAMPLE_WEIGHT | PECS_SAMPLE_WEIGHT_STRUCT)

/* The fields sample_id_all repeats on non-sample records. */
#define ID_ALL_FIELDS                                                                     \
	(PECS_SAMPLE_TID | PECS_SAMPLE_TIME | PECS_SAMPLE_ID | PECS_SAMPLE_STREAM_ID |     \
	 PECS_SAMPLE_CPU | PECS_SAMPLE_IDENTIFIER)

struct cursor {
	uint8_t *p;
};

static void put_u64(struct cursor *c, uint64_t v)
{
	memcpy(c->p, &v, sizeof(v));
	c->p += sizeof(v);
}

static void put_u32_pair(struct cursor *c, uint32_t lo, uint32_t hi)
{
	memcpy(c->p, &lo, sizeof(lo));
	memcpy(c->p + 4, &hi, sizeof(hi));
	c->p += 8;
}

/* Inline: without -mpopcnt, __builtin_popcountll() is a libgcc call, which was 3% of a
 * sample's way into the ring. */
static int popcount64(uint64_t v)
{
	v -= (v >> 1) & 0x5555555555555555ull;
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (int)((v * 0x0101010101010101ull) >> 56);
}

/* ---- read(2) layouts ---------------------------------------------------------- */

size_t ref_record_read_size(uint64_t read_format, uint32_t nr)
{
	size_t entry = 8, size = 0;

	if (read_format & PECS_FORMAT_TOTAL_TIME_ENABLED)
		size += 8;
	if (read_format & PECS_FORMAT_TOTAL_TIME_RUNNING)
		size += 8;
	if (read_format & PECS_FORMAT_ID)
		entry += 8;
	if (read_format & PECS_FORMAT_LOST)
		entry += 8;
	if (!(read_format & PECS_FORMAT_GROUP))
		return size + entry;
	return 8 + size + (size_t)nr * entry;
}

static int read_values_valid(uint64_t read_format, const struct ref_read_values *v)
{
	if (!v || read_format & ~(PECS_FORMAT_MAX - 1) || !v->nr || !v->members)
		return 0;
	return (read_format & PECS_FORMAT_GROUP) || v->nr == 1;
}

/* Callers have checked the values and the room. */
static void read_put(struct cursor *c, uint64_t read_format, const struct ref_read_values *v)
{
	uint32_t i;

	if (read_format & PECS_FORMAT_GROUP)
		put_u64(c, v->nr);
	else
		put_u64(c, v->members[0].value);
	if (read_format & PECS_FORMAT_TOTAL_TIME_ENABLED)
		put_u64(c, v->time_enabled);
	if (read_format & PECS_FORMAT_TOTAL_TIME_RUNNING)
		put_u64(c, v->time_running);
	for (i = 0; i < v->nr; i++) {
		if (read_format & PECS_FORMAT_GROUP)
			put_u64(c, v->members[i].value);
		if (read_format & PECS_FORMAT_ID)
			put_u64(c, v->members[i].id);
		if (read_format & PECS_FORMAT_LOST)
			put_u64(c, v->members[i].lost);
	}
}

ssize_t ref_record_read_encode(uint64_t read_format, const struct ref_read_values *v, void *out,
			       size_t cap)
{
	struct cursor c = { out };
	size_t size;

	if (!read_values_valid(read_format, v))
		return -EINVAL;
	size = ref_record_read_size(read_format, v->nr);
	/* The kernel refuses at open any group whose read would pass this. */
	if (size > PECS_READ_SIZE_MAX)
		return -E2BIG;
	if (cap < size)
		return -ENOSPC;
	read_put(&c, read_format, v);
	return (ssize_t)size;
}

/* ---- descriptors -------------------------------------------------------------- */

/* Whether the desc's bits are ones the encoder knows. */
static int desc_check(const struct ref_record_desc *d)
{
	if (!d || d->sample_type & ~(PECS_SAMPLE_MAX - 1) ||
	    d->read_format & ~(PECS_FORMAT_MAX - 1))
		return -EINVAL;
	return 0;
}

/* A copy of the caller's desc, checked. */
static int desc_load(const struct ref_record_desc *d, struct ref_record_desc *out)
{
	int err = desc_check(d);

	if (!err)
		*out = *d;
	return err;
}

/* A RAW payload keeps the record 8-byte aligned: its u32 size and the bytes fill u64s. */
static int sample_valid(const struct pecs_sample *s)
{
	if (s->nr_ips && !s->ips)
		return -EINVAL;
	if (s->raw_size && (!s->raw || (s->raw_size + 4u) % 8u))
		return -EINVAL;
	if ((s->nr_regs && !s->regs) || (s->stack_size && !s->stack))
		return -EINVAL;
	return 0;
}

/* A copy of the caller's sample (pecs/opts.h rules); the encoders read only the copy. */
static int sample_load(const struct pecs_sample *s, struct pecs_sample *out)
{
	int err;

	if (s && s->size == sizeof(*out)) {
		*out = *s;
	} else {
		memset(out, 0, sizeof(*out));
		err = pecs_opts_load(out, sizeof(*out), s, PECS_OPTS_SIZE_TO(pecs_sample, ips));
		if (err)
			return err;
	}
	return sample_valid(out);
}

/* ---- sample_id_all trailer ------------------------------------------------------ */

size_t ref_record_id_trailer_size(const struct ref_record_desc *d)
{
	struct ref_record_desc dd;

	if (desc_load(d, &dd) || !dd.sample_id_all)
		return 0;
	return 8 * (size_t)popcount64(dd.sample_type & ID_ALL_FIELDS);
}

static void trailer_put(struct cursor *c, const struct ref_record_desc *d,
			const struct pecs_sample *src)
{
	uint64_t st = d->sample_type;

	if (st & PECS_SAMPLE_TID)
		put_u32_pair(c, src ? src->pid : 0, src ? src->tid : 0);
	if (st & PECS_SAMPLE_TIME)
		put_u64(c, src ? src->time : 0);
	if (st & PECS_SAMPLE_ID)
		put_u64(c, d->id);
	if (st & PECS_SAMPLE_STREAM_ID)
		put_u64(c, d->stream_id);
	if (st & PECS_SAMPLE_CPU)
		put_u32_pair(c, src ? src->cpu : 0, 0);
	/* Last, so a reader finds the id at a fixed distance from the record's end. */
	if (st & PECS_SAMPLE_IDENTIFIER)
		put_u64(c, d->id);
}

ssize_t ref_record_encode_id_trailer(const struct ref_record_desc *d,
				     const struct pecs_sample *src, void *out, size_t cap)
{
	struct ref_record_desc dd;
	struct pecs_sample sl;
	struct cursor c = { out };
	size_t size;
	int err = desc_load(d, &dd);

	if (err)
		return err;
	if (src) {
		err = sample_load(src, &sl);
		if (err)
			return err;
		src = &sl;
	}
	size = ref_record_id_trailer_size(&dd);
	if (cap < size)
		return -ENOSPC;
	if (dd.sample_id_all)
		trailer_put(&c, &dd, src);
	return (ssize_t)size;
}

/* ---- PERF_RECORD_LOST ----------------------------------------------------------- */

ssize_t ref_record_encode_lost(const struct ref_record_desc *d, uint64_t lost,
			       const struct pecs_sample *trailer_src, void *out, size_t cap)
{
	struct ref_record_desc dd;
	struct pecs_sample sl;
	struct cursor c = { out };
	size_t size;
	int err = desc_load(d, &dd);

	if (err)
		return err;
	if (trailer_src) {
		err = sample_load(trailer_src, &sl);
		if (err)
			return err;
		trailer_src = &sl;
	}
	size = 8 + 16 + ref_record_id_trailer_size(&dd);
	if (cap < size)
		return -ENOSPC;
	put_u32_pair(&c, PECS_RECORD_LOST, (uint32_t)size << 16);
	put_u64(&c, dd.id);
	put_u64(&c, lost);
	if (dd.sample_id_all)
		trailer_put(&c, &dd, trailer_src);
	return (ssize_t)size;
}

/* ---- PERF_RECORD_SAMPLE --------------------------------------------------------- */

/* perf_callchain() stores nothing, not even a marker, for an excluded part. */
static int callchain_empty(const struct ref_record_desc *d, const struct pecs_sample *s)
{
	return ref_record_cpumode_is_kernel(s->misc) ? d->exclude_callchain_kernel
					  : d->exclude_callchain_user;
}

/* The record's bytes apart from callchain entries, counting the callchain's nr and its
 * context marker; 0 with *err set when the values are unusable. */
static size_t sample_fixed_size(const struct ref_record_desc *d, const struct pecs_sample *s,
				const struct ref_read_values *rv, uint32_t *ustack, int *err)
{
	uint64_t st = d->sample_type;
	size_t size = 8;

	size += 8 * (size_t)popcount64(st & FIXED_U64_FIELDS);
	if (st & WEIGHT_TYPE)
		size += 8;
	if (st & PECS_SAMPLE_READ) {
		size_t rs;

		if (!read_values_valid(d->read_format, rv)) {
			*err = -EINVAL;
			return 0;
		}
		rs = ref_record_read_size(d->read_format, rv->nr);
		if (rs > PECS_READ_SIZE_MAX) {
			*err = -E2BIG;
			return 0;
		}
		size += rs;
	}
	if (st & PECS_SAMPLE_CALLCHAIN)
		size += callchain_empty(d, s) ? 8 : 16;
	/* FIXED_U64_FIELDS counted RAW as the empty payload's 8 bytes. */
	if ((st & PECS_SAMPLE_RAW) && s->raw_size)
		size += 4 + (size_t)s->raw_size - 8;
	size = ref_record_regs_stack_size(d, s, size, ustack);
	if (size > RECORD_SIZE_MAX) {
		*err = -E2BIG;
		return 0;
	}
	return size;
}

static uint32_t callchain_keep(const struct ref_record_desc *d, const struct pecs_sample *s,
			       size_t fixed)
{
	uint64_t keep = s->nr_ips;
	uint64_t room = (RECORD_SIZE_MAX - fixed) / 8;

	if (!(d->sample_type & PECS_SAMPLE_CALLCHAIN) || callchain_empty(d, s))
		return 0;
	/* The kernel stops storing ips at max_stack; markers do not count. */
	if (d->max_stack && keep > d->max_stack)
		keep = d->max_stack;
	if (keep > room)
		keep = room;
	return (uint32_t)keep;
}

static int sample_prepare(const struct ref_record_desc *d, const struct pecs_sample *su,
			  const struct ref_read_values *rv, struct ref_record_desc *dd,
			  struct pecs_sample *s, size_t *fixed, uint32_t *keep)
{
	int err = desc_load(d, dd);
	uint32_t ustack;

	if (!err)
		err = sample_load(su, s);
	if (err)
		return err;
	*fixed = sample_fixed_size(dd, s, rv, &ustack, &err);
	if (err)
		return err;
	*keep = callchain_keep(dd, s, *fixed);
	return 0;
}

uint32_t ref_record_callchain_room(const struct ref_record_desc *d, const struct pecs_sample *s,
				   const struct ref_read_values *rv)
{
	struct ref_record_desc dd;
	struct pecs_sample sl;
	size_t fixed;
	uint32_t keep;

	if (sample_prepare(d, s, rv, &dd, &sl, &fixed, &keep))
		return 0;
	return keep;
}

/* Checked, not copied: this runs once per sample. */
static int desc_view(const struct ref_record_desc *d, const struct ref_record_desc **out)
{
	*out = d;
	return desc_check(d);
}

static int sample_view(const struct pecs_sample *s, struct pecs_sample *copy,
		       const struct pecs_sample **out)
{
	if (!s || s->size != sizeof(*s)) {
		*out = copy;
		return sample_load(s, copy);
	}
	*out = s;
	return sample_valid(s);
}

ssize_t ref_record_plan_sample(const struct ref_record_desc *d, const struct pecs_sample *s,
			       const struct ref_read_values *rv, struct ref_record_plan *plan)
{
	int err = desc_view(d, &plan->d);

	if (!err)
		err = sample_view(s, &plan->scopy, &plan->s);
	if (!err)
		plan->fixed = sample_fixed_size(plan->d, plan->s, rv, &plan->ustack, &err);
	if (err)
		return err;
	plan->keep = callchain_keep(plan->d, plan->s, plan->fixed);
	plan->rv = rv;
	plan->size = plan->fixed + 8 * (size_t)plan->keep;
	return (ssize_t)plan->size;
}

ssize_t ref_record_sample_size(const struct ref_record_desc *d, const struct pecs_sample *s,
			       const struct ref_read_values *rv)
{
	struct ref_record_plan plan;

	return ref_record_plan_sample(d, s, rv, &plan);
}

/* The marker perf_callchain() puts before the part of the stack the sample came from. */
static uint64_t context_marker(uint16_t misc)
{
	switch (misc & PECS_MISC_CPUMODE_MASK) {
	case PECS_MISC_KERNEL:
		return PECS_CONTEXT_KERNEL;
	case PECS_MISC_HYPERVISOR:
		return PECS_CONTEXT_HV;
	case PECS_MISC_GUEST_KERNEL:
		return PECS_CONTEXT_GUEST_KERNEL;
	case PECS_MISC_GUEST_USER:
		return PECS_CONTEXT_GUEST_USER;
	default:
		return PECS_CONTEXT_USER;
	}
}

/* The fields after the callchain, in perf_output_sample() order: what the engine has no
 * data for is written as Linux writes it when it has none. */
static void put_sample_tail(struct cursor *c, const struct ref_record_desc *dd,
			    const struct pecs_sample *s, uint64_t st, uint32_t ustack)
{
	uint32_t raw_size = s->raw_size;

	/* Without raw data the kernel still writes a 4-byte size and 4 zero bytes. */
	if ((st & PECS_SAMPLE_RAW) && raw_size) {
		memcpy(c->p, &raw_size, 4);
		memcpy(c->p + 4, s->raw, raw_size);
		c->p += 4 + (size_t)raw_size;
	} else if (st & PECS_SAMPLE_RAW) {
		put_u32_pair(c, 4, 0);
	}
	/* Software events cannot open with BRANCH_STACK; were one to, nr would be 0. */
	if (st & PECS_SAMPLE_BRANCH_STACK)
		put_u64(c, 0);
	/* Without captured registers: abi 0 (PERF_SAMPLE_REGS_ABI_NONE), and a stack
	 * size 0 with no dyn_size, as the kernel writes for a task without user regs. */
	if (st & PECS_SAMPLE_REGS_USER)
		ref_record_put_regs(c->p, s, s->regs_abi, dd->regs_user, &c->p);
	if (st & PECS_SAMPLE_STACK_USER)
		ref_record_put_ustack(c->p, s, ustack, &c->p);
	if (st & WEIGHT_TYPE)
		put_u64(c, 0);
	if (st & PECS_SAMPLE_DATA_SRC)
		put_u64(c, PECS_DATA_SRC_NA);
	if (st & PECS_SAMPLE_TRANSACTION)
		put_u64(c, 0);
	if (st & PECS_SAMPLE_REGS_INTR)
		ref_record_put_regs(c->p, s, ref_record_has_intr_regs(s) ? s->regs_abi : 0,
				    dd->regs_intr, &c->p);
	/* The engine has no page tables to translate addr with. */
	if (st & PECS_SAMPLE_PHYS_ADDR)
		put_u64(c, 0);
	if (st & PECS_SAMPLE_CGROUP)
		put_u64(c, dd->cgroup);
	/* As perf_get_page_size() reports an address it cannot resolve. */
	if (st & PECS_SAMPLE_DATA_PAGE_SIZE)
		put_u64(c, 0);
	if (st & PECS_SAMPLE_CODE_PAGE_SIZE)
		put_u64(c, dd->code_page_size);
	if (st & PECS_SAMPLE_AUX)
		put_u64(c, 0);
}

ssize_t ref_record_encode_planned(const struct ref_record_plan *plan, void *out, size_t cap)
{
	const struct ref_record_desc *dd = plan->d;
	const struct pecs_sample *s = plan->s;
	struct cursor c = { out };
	uint64_t st = dd->sample_type;
	size_t size = plan->size;
	uint32_t keep = plan->keep;
	uint16_t misc = s->misc ? s->misc : PECS_MISC_USER;

	if (cap < size)
		return -ENOSPC;
	put_u32_pair(&c, PECS_RECORD_SAMPLE, (uint32_t)misc | (uint32_t)size << 16);
	if (st & PECS_SAMPLE_IDENTIFIER)
		put_u64(&c, dd->id);
	if (st & PECS_SAMPLE_IP)
		put_u64(&c, s->nr_ips ? s->ips[0] : 0);
	if (st & PECS_SAMPLE_TID)
		put_u32_pair(&c, s->pid, s->tid);
	if (st & PECS_SAMPLE_TIME)
		put_u64(&c, s->time);
	if (st & PECS_SAMPLE_ADDR)
		put_u64(&c, s->addr);
	if (st & PECS_SAMPLE_ID)
		put_u64(&c, dd->id);
	if (st & PECS_SAMPLE_STREAM_ID)
		put_u64(&c, dd->stream_id);
	if (st & PECS_SAMPLE_CPU)
		put_u32_pair(&c, s->cpu, 0);
	if (st & PECS_SAMPLE_PERIOD)
		put_u64(&c, s->period ? s->period : dd->period);
	if (st & PECS_SAMPLE_READ)
		read_put(&c, dd->read_format, plan->rv);
	if ((st & PECS_SAMPLE_CALLCHAIN) && callchain_empty(dd, s)) {
		put_u64(&c, 0);
	} else if (st & PECS_SAMPLE_CALLCHAIN) {
		put_u64(&c, 1 + (uint64_t)keep);
		put_u64(&c, context_marker(misc));
		/* A sample without ips may have ips NULL: no memcpy() from it at all. */
		if (keep)
			memcpy(c.p, s->ips, 8 * (size_t)keep);
		c.p += 8 * (size_t)keep;
	}
	put_sample_tail(&c, dd, s, st, plan->ustack);
	return (ssize_t)size;
}

ssize_t ref_record_encode_sample(const struct ref_record_desc *d, const struct pecs_sample *s,
				 const struct ref_read_values *rv, void *out, size_t cap)
{
	struct ref_record_plan plan;
	ssize_t n = ref_record_plan_sample(d, s, rv, &plan);

	if (n < 0)
		return n;
	return ref_record_encode_planned(&plan, out, cap);
}
