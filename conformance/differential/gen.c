/* Seeded random call sequences: mostly plausible calls (software events, small groups,
 * the perf ioctls with fitting arguments), each now and then bent one field out of shape,
 * since the interesting answers sit next to the ordinary ones. */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "conformance/differential/diff.h"

static uint64_t next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned below(uint64_t *x, unsigned n)
{
	return (unsigned)(next(x) % n);
}

static int chance(uint64_t *x, unsigned percent)
{
	return below(x, 100) < percent;
}

uint64_t diff_seq_seed(uint64_t seed, uint64_t index)
{
	uint64_t x = seed ^ (index * 0xd1b54a32d192ed03ull);
	return next(&x);
}

static const uint32_t sizes[] = {
	PECS_ATTR_SIZE_VER0, PECS_ATTR_SIZE_VER1, PECS_ATTR_SIZE_VER5, PECS_ATTR_SIZE_VER7,
	PECS_ATTR_SIZE_LATEST, PECS_ATTR_SIZE_LATEST, PECS_ATTR_SIZE_LATEST, 0, 60, 144, 4096,
};

/* One field of the attr, bent: the rare values that reach the checks past the common path. */
static void bend(uint64_t *x, struct pecs_attr *a, int *tail)
{
	switch (below(x, 14)) {
	case 0: a->flags ^= 1ull << below(x, 40); break;
	case 1: a->sample_type |= 1ull << below(x, 26); break;
	case 2: a->read_format |= 1ull << below(x, 6); break;
	case 3: a->aux_sample_size = 1u << below(x, 12); break;
	case 4: a->sample_max_stack = (uint16_t)below(x, 1024); break;
	case 5: a->flags |= PECS_ATTR_USE_CLOCKID; a->clockid = (int32_t)below(x, 12); break;
	case 6: a->config = below(x, 16); break;
	case 7: a->type = below(x, 2) ? 0x7fffu : 1u + below(x, 5); break;
	case 8: a->aux_action = 1u << below(x, 4); break;
	case 9: a->sig_data = 1; a->flags |= PECS_ATTR_SIGTRAP; break;
	case 10: a->config1 = 1; break;
	case 11: a->branch_sample_type = 1; break;
	case 12: a->aux_watermark = 4096; break;
	default: *tail = 1; a->size = 4096; break;
	}
}

static void gen_attr(uint64_t *x, struct diff_call *c)
{
	struct pecs_attr *a = &c->attr;
	memset(a, 0, sizeof(*a));
	a->type = PECS_TYPE_SOFTWARE;
	a->size = chance(x, 80) ? PECS_ATTR_SIZE_LATEST : sizes[below(x, 11)];
	a->config = below(x, 12);
	if (chance(x, 50))
		a->flags |= PECS_ATTR_DISABLED;
	if (chance(x, 80))
		a->flags |= PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	if (chance(x, 35)) {
		static const uint64_t periods[] = {1000000000ull, 100000000ull, 1ull << 40,
						   1ull << 63, 1000, 4000};
		a->sample_period = periods[below(x, 6)];
		if (chance(x, 15)) {
			a->flags |= PECS_ATTR_FREQ;
			a->sample_period = chance(x, 80) ? 1 + below(x, 10) : 1u << 30;
		}
		a->sample_type = next(x) & 0x3ff;
	}
	a->read_format = below(x, 32);
	if (chance(x, 10))
		a->flags |= PECS_ATTR_INHERIT;
	if (chance(x, 10))
		a->wakeup_events = 1 + below(x, 4);
	for (int k = chance(x, 40) ? 1 + (int)below(x, 2) : 0; k > 0; k--)
		bend(x, a, &c->tail_byte);
}

static int pick_open(uint64_t *x, const struct diff_seq *s)
{
	int opens[DIFF_MAX_CALLS], n = 0;
	for (int i = 0; i < s->n; i++)
		if (s->calls[i].op == DIFF_OPEN)
			opens[n++] = s->calls[i].id;
	if (n == 0 || chance(x, 4))
		return DIFF_BAD_REF;
	return opens[below(x, (unsigned)n)];
}

static void gen_open(uint64_t *x, const struct diff_seq *s, struct diff_call *c, int ncpus)
{
	gen_attr(x, c);
	static const enum diff_pid pids[] = {PID_SELF, PID_SELF, PID_TID, PID_ANY};
	c->pid = pids[below(x, 4)];
	c->cpu = chance(x, 60) ? -1 : below(x, 2) ? 0 : ncpus - 1;
	c->group = chance(x, 60) ? DIFF_NO_REF : pick_open(x, s);
	static const unsigned long flags[] = {PECS_FLAG_FD_CLOEXEC, PECS_FLAG_FD_NO_GROUP,
					      PECS_FLAG_FD_OUTPUT, PECS_FLAG_PID_CGROUP, 1ul << 4};
	c->flags = chance(x, 70) ? 0 : flags[below(x, 5)];
}

static const unsigned long requests[] = {
	PECS_IOC_ENABLE, PECS_IOC_DISABLE, PECS_IOC_RESET, PECS_IOC_REFRESH, PECS_IOC_PERIOD,
	PECS_IOC_ID, PECS_IOC_SET_OUTPUT, PECS_IOC_PAUSE_OUTPUT, PECS_IOC_MODIFY_ATTRIBUTES,
	PECS_IOC_SET_FILTER, PECS_IOC_QUERY_BPF, PECS_IOC_ENABLE, PECS_IOC_DISABLE,
	FIONBIO, FIOCLEX, FIONCLEX, FIOASYNC, FIONREAD, 0x2499ul, FIGETBSZ, FIFREEZE, FITHAW,
	FS_IOC_FIEMAP, FIOQSIZE,
};

static void gen_ioctl(uint64_t *x, const struct diff_seq *s, struct diff_call *c)
{
	c->request = requests[below(x, sizeof(requests) / sizeof(requests[0]))];
	c->arg_kind = ARG_VALUE;
	c->arg = below(x, 3);
	switch (c->request) {
	case PECS_IOC_PERIOD:
	case PECS_IOC_ID:
	case PECS_IOC_MODIFY_ATTRIBUTES:
	case PECS_IOC_SET_FILTER:
	case PECS_IOC_QUERY_BPF:
	case FIONBIO:
	case FIOASYNC:
	case FIONREAD:
	case FIGETBSZ:
	case FS_IOC_FIEMAP:
	case FIOQSIZE:
		c->arg_kind = chance(x, 85) ? ARG_PTR : below(x, 2) ? ARG_NULL : ARG_BADPTR;
		c->arg = chance(x, 70) ? 1000000ull << below(x, 4) : below(x, 2);
		break;
	case PECS_IOC_SET_OUTPUT:
		c->arg_kind = chance(x, 80) ? ARG_FD : ARG_VALUE;
		c->arg = c->arg_kind == ARG_FD ? (uint64_t)(int64_t)pick_open(x, s)
					       : (uint64_t)-1;
		break;
	default:
		break;
	}
	/* FIOASYNC on raises SIGIO at every wakeup: with a clock sampling every 10 us the
	 * kernel side spent minutes of system time in signal delivery, unkillable, so the
	 * sequences turn it off (or pass a bad pointer) and never on. */
	if (c->request == FIOASYNC && c->arg_kind == ARG_PTR)
		c->arg = 0;
}

/* The lengths, offsets and flags that mm/mmap.c refuses before perf_mmap() sees the
 * call, or perf_mmap() refuses by size (ENOMEM): one mmap in 16. Drawn from a stream of
 * their own, so every other draw of a seed stays what earlier runs of it drew. */
static void gen_mmap_refused(uint64_t seed, struct diff_call *c)
{
	/* 2^19 + 1 pages is past rb_alloc()'s limit; a ring it allows (2^18 + 1) would
	 * spend seconds clearing a GiB on both sides */
	static const int64_t huge[] = {-1, (int64_t)1 << 35, (int64_t)1 << 31,
				       ((int64_t)1 << 31) - 1, ((int64_t)1 << 19) + 1};
	uint64_t y = seed ^ 0x6d6d61702d766dull;

	if (below(&y, 16))
		return;
	switch (below(&y, 4)) {
	case 0:
		c->pages = huge[below(&y, 5)];
		break;
	case 1:
		c->offset_pages = chance(&y, 50) ? -1 : -2;
		break;
	case 2:
		c->offset_byte = 1;
		break;
	default:
		c->mflags = MAP_SHARED_VALIDATE | (chance(&y, 50) ? MAP_SYNC : 0);
		break;
	}
}

static void gen_call(uint64_t *x, const struct diff_seq *s, struct diff_call *c, int ncpus)
{
	memset(c, 0, sizeof(*c));
	c->id = s->n;
	unsigned k = s->n == 0 ? 0 : below(x, 100);
	c->op = k < 30 ? DIFF_OPEN : k < 62 ? DIFF_IOCTL : k < 80 ? DIFF_READ :
		k < 88 ? DIFF_MMAP : k < 94 ? DIFF_POLL : DIFF_CLOSE;
	if (c->op == DIFF_OPEN) {
		gen_open(x, s, c, ncpus);
		return;
	}
	c->ref = pick_open(x, s);
	if (c->op == DIFF_IOCTL) {
		gen_ioctl(x, s, c);
	} else if (c->op == DIFF_READ) {
		static const size_t counts[] = {0, 1, 7, 8, 16, 24, 32, 40, 48, 64, 4096};
		c->count = counts[below(x, 11)];
	} else if (c->op == DIFF_MMAP) {
		static const int prots[] = {PROT_READ | PROT_WRITE, PROT_READ, PROT_WRITE,
					    PROT_NONE, PROT_READ | PROT_EXEC};
		c->pages = chance(x, 80) ? 1 + (1 << below(x, 4)) : (int)below(x, 4);
		c->prot = chance(x, 70) ? prots[0] : prots[below(x, 5)];
		c->mflags = chance(x, 90) ? MAP_SHARED : MAP_PRIVATE;
		c->offset_pages = chance(x, 95) ? 0 : 1;
		gen_mmap_refused(*x, c);
	} else if (c->op == DIFF_POLL) {
		c->events = chance(x, 80) ? POLLIN : POLLIN | POLLOUT | POLLPRI;
	}
}

void diff_gen(struct diff_seq *s, uint64_t seed)
{
	uint64_t x = seed;
	memset(s, 0, sizeof(*s));
	s->seed = seed;
	int ncpus = diff_exec_ncpus();
	int n = 2 + (int)below(&x, DIFF_MAX_CALLS - 1);
	while (s->n < n) {
		gen_call(&x, s, &s->calls[s->n], ncpus);
		s->n++;
	}
}
