/* Ring buffers seen from the events: mmap(2) rules and mlock accounting, munmap(2),
 * SET_OUTPUT redirection and poll(2). The ring itself is ref/ring's. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "ref/event/event.h"
#include "ref/policy/policy.h"
#include "ref/record/record.h"
#include "ref/ring/ring.h"


static ssize_t encode_lost(void *arg, const void *cookie, uint64_t lost, void *out, size_t cap)
{
	const struct lost_cookie *c = cookie;
	struct ref_rb *rb = arg;
	struct ref_record_desc d;

	ref_event_record_desc(c ? c->ev : rb->owner, &d);
	return ref_record_encode_lost(&d, lost, c ? c->s : NULL, out, cap);
}

static int rb_attach(struct ref_rb *rb, struct ref_event *ev)
{
	if (rb->nr_events == rb->cap_events) {
		size_t cap = rb->cap_events ? rb->cap_events * 2 : 4;
		struct ref_event **n = realloc(rb->events, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rb->events = n;
		rb->cap_events = cap;
	}
	rb->events[rb->nr_events++] = ev;
	ev->rb = rb;
	return 0;
}

static void rb_free(struct ref_rb *rb)
{
	ref_ring_destroy(rb->ring);
	free(rb->events);
	free(rb);
}

/* ring_buffer_attach(event, NULL): the rb goes when nothing maps or uses it. */
void ref_event_rb_detach(struct ref_event *ev)
{
	struct ref_rb *rb = ev->rb;

	if (!rb)
		return;
	for (size_t i = 0; i < rb->nr_events; i++) {
		if (rb->events[i] == ev) {
			rb->events[i] = rb->events[--rb->nr_events];
			break;
		}
	}
	if (rb->owner == ev)
		rb->owner = NULL;
	ev->rb = NULL;
	if (!rb->nr_events && !rb->mmap_count)
		rb_free(rb);
}

static int is_pow2(size_t n)
{
	return n && !(n & (n - 1));
}

/* perf_mmap()'s charge: perf_event_mlock_kb per CPU from the user's perf allowance,
 * the rest against RLIMIT_MEMLOCK, refused past that unless CAP_IPC_LOCK. */
static int mlock_charge(struct ref_event_env *env, long user_extra, long *extra_out)
{
	long page_kb = env->lim.page_size / 1024;
	long user_lock_limit = (env->lim.mlock_kb / page_kb) * env->lim.ncpus;
	long user_locked = env->user_locked, extra = 0, lock_limit;
	struct rlimit rl;

	if (user_locked > user_lock_limit)
		user_locked = user_lock_limit;
	user_locked += user_extra;
	if (user_locked > user_lock_limit)
		extra = user_locked - user_lock_limit;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		lock_limit = -1;
	else
		lock_limit = (long)(rl.rlim_cur / (rlim_t)env->lim.page_size);
	if (lock_limit >= 0 && env->pinned + extra > lock_limit &&
	    ref_policy_allow_mlock_over(&env->policy))
		return -EPERM;
	*extra_out = extra;
	return 0;
}

static int rb_create(struct ref_event *ev, size_t nr_pages, int writable, long extra,
		     long user_extra)
{
	struct ref_event_env *env = ev->env;
	struct ref_ring_opts o = {
		.nr_pages = nr_pages,
		.page_size = env->lim.page_size,
		.overwrite = !writable,
		.backward = (ev->attr.flags & PECS_ATTR_WRITE_BACKWARD) != 0,
		.wakeup_events = ev->attr.wakeup_events,
		.watermark = (ev->attr.flags & PECS_ATTR_WATERMARK) != 0,
		.wakeup_watermark = ev->attr.wakeup_events,
	};
	struct ref_rb *rb = calloc(1, sizeof(*rb));
	int err;

	if (!rb)
		return -ENOMEM;
	err = ref_ring_create_opts(&rb->ring, &o);
	if (err) {
		free(rb);
		return err;
	}
	rb->nr_pages = nr_pages;
	rb->owner = ev;
	rb->extra = extra;
	rb->user_extra = user_extra;
	rb->writable = writable;
	rb->backward = o.backward;
	ref_ring_set_lost_fn(rb->ring, encode_lost, rb);
	ref_ring_set_wakeup_fn(rb->ring, ref_event_fasync_ring_woke, rb);
	err = rb_attach(rb, ev);
	if (err) {
		rb_free(rb);
		return err;
	}
	env->user_locked += user_extra;
	env->pinned += extra;
	return 0;
}

/* What a range [addr, addr+len) does to the engine's mappings, as the kernel's unmap of
 * it would: -EINVAL when it cuts one (perf_mmap_may_split()), else how many it holds
 * whole. */
static int maps_in_range(const struct ref_event_env *env, uintptr_t addr, size_t len)
{
	int whole = 0;

	for (const struct ref_mapping *m = env->maps; m; m = m->next) {
		uintptr_t a = (uintptr_t)m->addr;

		if (a + m->len <= addr || a >= addr + len)
			continue;
		if (a < addr || a + m->len > addr + len)
			return -EINVAL;
		whole++;
	}
	return whole;
}

static void mapping_close(struct ref_event_env *env, struct ref_mapping *m, int unmap,
			  struct ref_defer *d);

/* Closes the engine's mappings that lie whole in [addr, addr+len): the range has been
 * mapped or unmapped over them already when unmap is 0. */
static void maps_close_range(struct ref_event_env *env, uintptr_t addr, size_t len,
			     const struct ref_mapping *keep, int unmap, struct ref_defer *d)
{
	for (struct ref_mapping **pp = &env->maps; *pp;) {
		struct ref_mapping *m = *pp;
		uintptr_t a = (uintptr_t)m->addr;

		if (m == keep || a < addr || a + m->len > addr + len) {
			pp = &m->next;
			continue;
		}
		*pp = m->next;
		mapping_close(env, m, unmap, d);
	}
}

/* The first mapping of an event makes its buffer: the mlock charge, rb_alloc()'s limit,
 * and the metadata page as the kernel first fills it. */
static int rb_first_map(struct ref_event *ev, size_t nr_pages, int prot)
{
	struct ref_event_env *env = ev->env;
	long ps = env->lim.page_size, extra;
	int err = mlock_charge(env, (long)nr_pages + 1, &extra);

	if (err)
		return err;
	/* rb_alloc(): the page pointers and the header share one allocation of at most
	 * 2^MAX_PAGE_ORDER pages; past it ENOMEM, however much memory is free. */
	if (nr_pages * sizeof(void *) >= (size_t)ps << 10)
		return -ENOMEM;
	err = rb_create(ev, nr_pages + 1, (prot & PROT_WRITE) != 0, extra,
			(long)nr_pages + 1 - extra);
	if (err)
		return err;
	ref_event_sync(ev);
	ref_event_update_userpage(ev);
	return 0;
}

/* The placement do_mmap() asks of a MAP_FIXED mapping before the file's mmap sees it (the
 * engine made its other checks: length, offset, flags, noexec): a page-aligned address,
 * and a range that cuts none of the engine's mappings (perf_mmap_may_split()). */
static int fixed_checks(const struct ref_event_env *env, size_t length, void *want)
{
	long ps = env->lim.page_size;

	if ((uintptr_t)want & (uintptr_t)(ps - 1))
		return -EINVAL;
	return maps_in_range(env, (uintptr_t)want, length) < 0 ? -EINVAL : 0;
}

/* perf_mmap(), after the engine made do_mmap()'s checks. */
int ref_event_mmap(struct ref_event *ev, size_t length, int prot, int flags, off_t offset,
		   void **addr, struct ref_defer *d)
{
	struct ref_event_env *env = ev->env;
	long ps = env->lim.page_size;
	int fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
	size_t vma_size, nr_pages;
	struct ref_mapping *m;
	void *want = NULL;
	int err;

	if (!addr)
		return -EFAULT;
	if (fixed) {
		want = *addr;
		err = fixed_checks(env, length, want);
		if (err)
			return err;
	}
	if ((ev->attr.flags & PECS_ATTR_INHERIT) && ev->cpu == -1)
		return -EINVAL;
	if ((flags & MAP_TYPE) != MAP_SHARED && (flags & MAP_TYPE) != MAP_SHARED_VALIDATE)
		return -EINVAL;
	err = ref_policy_allow_read(&env->policy);
	if (err)
		return err;
	vma_size = (length + (size_t)ps - 1) & ~((size_t)ps - 1);
	/* Measured on 6.18: a mapping of more than INT_MAX pages is ENOMEM before its
	 * offset or size is looked at (6.12 has the check on the AUX path only). */
	if (vma_size / (size_t)ps > INT_MAX)
		return -ENOMEM;
	/* A non-zero offset maps the AUX area, which no event here has. */
	if (offset)
		return -EINVAL;
	nr_pages = vma_size / (size_t)ps - 1;
	if (nr_pages && !is_pow2(nr_pages))
		return -EINVAL;

	if (ev->rb) {
		if (ev->rb->nr_pages != nr_pages + 1)
			return -EINVAL;
		/* Measured on 6.18: an event writing into another event's buffer (SET_OUTPUT)
		 * cannot map it through its own fd. */
		if (ev->rb->owner != ev)
			return -EBUSY;
	} else {
		err = rb_first_map(ev, nr_pages, prot);
		if (err)
			return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = ref_ring_map_at(ev->rb->ring, prot, want, fixed, &m->addr);
	if (err) {
		free(m);
		if (!ev->rb->mmap_count) {
			env->user_locked -= ev->rb->user_extra;
			env->pinned -= ev->rb->extra;
			ref_event_rb_detach(ev);
		}
		return err;
	}
	m->len = vma_size;
	m->ev = ev;
	m->rb = ev->rb;
	m->next = env->maps;
	env->maps = m;
	ev->rb->mmap_count++;
	ev->mmap_count++;
	ref_event_get(ev);
	*addr = m->addr;
	/* MAP_FIXED replaced whatever lay there: perf mappings it covered are closed. */
	if (fixed)
		maps_close_range(env, (uintptr_t)m->addr, vma_size, m, 0, d);
	return 0;
}

/* perf_mmap_close(): when the last mapping of a buffer goes, every event still writing
 * into it is detached and the mlock charge returned. */
static void mapping_close(struct ref_event_env *env, struct ref_mapping *m, int unmap,
			  struct ref_defer *d)
{
	struct ref_rb *rb = m->rb;
	struct ref_event *ev = m->ev;

	if (unmap)
		ref_ring_unmap(rb->ring, m->addr);
	ev->mmap_count--;
	if (--rb->mmap_count == 0) {
		env->user_locked -= rb->user_extra;
		env->pinned -= rb->extra;
		if (!rb->nr_events) {
			rb_free(rb);
		} else {
			/* Detaching the last event frees rb. */
			for (int last = 0; !last;) {
				last = rb->nr_events == 1;
				ref_event_rb_detach(rb->events[rb->nr_events - 1]);
			}
		}
	}
	free(m);
	ref_event_put(ev, d);
}

int ref_event_munmap_locked(struct ref_event_env *env, void *addr, size_t length,
			    struct ref_defer *d)
{
	size_t ps = (size_t)env->lim.page_size;
	size_t len = (length + ps - 1) & ~(ps - 1);
	int whole, exact = 0;

	if (!length || ((uintptr_t)addr & (ps - 1)))
		return -EINVAL;
	/* perf_mmap_may_split(): a perf mapping goes whole or not at all. A range that
	 * holds none is not this engine's to unmap. */
	whole = maps_in_range(env, (uintptr_t)addr, len);
	if (whole <= 0)
		return -EINVAL;
	for (const struct ref_mapping *m = env->maps; m; m = m->next)
		exact |= m->addr == addr && m->len == len;
	maps_close_range(env, (uintptr_t)addr, len, NULL, 1, d);
	/* A range wider than the mapping it holds: munmap(2) takes the rest as well. */
	return exact || !munmap(addr, len) ? 0 : -errno;
}

int ref_event_set_output(struct ref_event *ev, struct ref_event *target)
{
	struct ref_rb *rb = NULL;

	if (target) {
		if (target == ev || target->cpu != ev->cpu)
			return -EINVAL;
		/* A per-task buffer takes only that task's events. */
		if (target->cpu == -1 && target->tid != ev->tid)
			return -EINVAL;
		if (target->clock != ev->clock)
			return -EINVAL;
		if ((target->attr.flags ^ ev->attr.flags) & PECS_ATTR_WRITE_BACKWARD)
			return -EINVAL;
	}
	/* An event with its own live mapping cannot be pointed elsewhere. */
	if (ev->mmap_count)
		return -EINVAL;
	if (target) {
		rb = target->rb;
		if (!rb || !rb->mmap_count)
			return -EINVAL;
	}
	if (rb == ev->rb)
		return 0;
	ref_event_rb_detach(ev);
	return rb ? rb_attach(rb, ev) : 0;
}

int ref_event_poll_locked(struct ref_event *ev)
{
	/* is_event_hup(): a task event whose task has exited hangs up, mapped or not, and so
	 * does one remove_on_exec left in its EXIT state. */
	if (!ev->rb || ev->exec.removed ||
	    (ev->pid != -1 && ref_event_task_exited(ev->tid, ev->same_process)))
		return POLLHUP;
	return ref_ring_poll(ev->rb->ring) ? POLLIN : 0;
}
