/* ioctl(2) on an event fd, request by request as _perf_ioctl() handles them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "ref/event/event.h"
#include "ref/policy/policy.h"
#include "ref/ring/ring.h"
#include "ref/uaccess/uaccess.h"

static int ioc_refresh(struct ref_event *ev, int refresh, struct ref_defer *d)
{
	if ((ev->attr.flags & PECS_ATTR_INHERIT) || !ref_attr_is_sampling(&ev->attr))
		return -EINVAL;
	ev->event_limit += refresh;
	ref_event_enable(ev, d);
	return 0;
}

static int ioc_period(struct ref_event *ev, const uint64_t *uptr, struct ref_defer *d)
{
	uint64_t value;
	int err = ref_uaccess_copy_from_user(&value, uptr, sizeof(value));

	if (err)
		return err;
	if (!ref_attr_is_sampling(&ev->attr) || !value)
		return -EINVAL;
	if (ev->attr.flags & PECS_ATTR_FREQ) {
		if (value > (uint64_t)ev->env->lim.max_sample_rate)
			return -EINVAL;
	} else if (value & (1ull << 63)) {
		return -EINVAL;
	}
	ev->period = value;
	ev->attr.sample_period = value;
	/* _perf_event_period() leaves hw.last_period alone; perf_swevent_set_period()
	 * copies the new period there at the next overflow, the hrtimer of the clock
	 * events never does (measured: their samples keep the open-time period). */
	if (!ref_kind_is_clock(ev->kind))
		ev->last_period = value;
	if (ev->running && ev->has_sampler && ev->ops.reconfigure)
		ref_event_defer_add(d, ev, REF_DEFER_RECONFIGURE);
	return 0;
}

static int ioc_set_output(struct ref_event *ev, unsigned long arg)
{
	struct ref_event *target;

	if (arg == (unsigned long)-1)
		return ref_event_set_output(ev, NULL);
	/* The kernel takes the fd as an unsigned int. */
	target = ev->env->fd_lookup(ev->env, (int)(unsigned)arg);
	if (!target)
		return -EBADF;
	return ref_event_set_output(ev, target);
}

/* bpf_prog_get(): EBADF for a closed fd; the engine runs no BPF, so any open fd (even
 * a real perf_event program) is one it cannot attach: EINVAL. */
static int ioc_set_bpf(unsigned long arg)
{
	int fd = (int)(unsigned)arg;

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	return -EINVAL;
}

static int ioc_modify(struct ref_event *ev, struct pecs_attr *uattr)
{
	struct pecs_attr na;
	int err = ref_attr_copy(uattr, &na, &ev->env->lim, &ev->env->policy);

	if (err)
		return err;
	/* The clock events live on their own PMU types, which never equal the attr's. */
	if (ref_kind_is_clock(ev->kind) || na.type != ev->attr.type)
		return -EINVAL;
	/* Only breakpoints can be modified; the engine has none. */
	return -EOPNOTSUPP;
}

/* do_vfs_ioctl() answers a few requests for every file before perf_ioctl() (and its
 * security hook) sees them. FIONBIO and FIOASYNC only read their int: no read(2) of an
 * event blocks, and no SIGIO reaches anyone without F_SETOWN, so their flags change
 * nothing the engine shows. The perf fd is an anonymous inode: no freeze, no extents,
 * and the pseudo filesystem's block size is the page size. 1 when it is one of them. */
static int vfs_ioctl(struct ref_event *ev, unsigned int cmd, unsigned long arg, int *ret)
{
	int on, bsize = (int)ev->env->lim.page_size;

	switch (cmd) {
	case FIOCLEX:
	case FIONCLEX:
		*ret = 0;
		return 1;
	case FIONBIO:
	case FIOASYNC:
		*ret = ref_uaccess_copy_from_user(&on, (const void *)arg, sizeof(on));
		return 1;
	case FIGETBSZ:
		*ret = ref_uaccess_copy_to_user((void *)arg, &bsize, sizeof(bsize));
		return 1;
	case FIFREEZE:
	case FITHAW:
		/* thaw_super() refuses a filesystem that is not frozen, and this one never is. */
		if (!ref_policy_capable(&ev->env->policy, REF_CAP_SYS_ADMIN))
			*ret = -EPERM;
		else
			*ret = cmd == FIFREEZE ? -EOPNOTSUPP : -EINVAL;
		return 1;
	case FS_IOC_FIEMAP:
		*ret = -EOPNOTSUPP;
		return 1;
	default:
		return 0;
	}
}

int ref_event_ioctl(struct ref_event *ev, unsigned long request, unsigned long arg,
		    struct ref_defer *d)
{
	/* The kernel's cmd and the GROUP flag are both 32 bits wide. */
	unsigned int cmd = (unsigned int)request;
	int group = ((uint32_t)arg & PECS_IOC_FLAG_GROUP) != 0;
	int err;

	if (vfs_ioctl(ev, cmd, arg, &err))
		return err;
	err = ref_policy_allow_write(&ev->env->policy);
	if (err)
		return err;
	switch (cmd) {
	case PECS_IOC_ENABLE:
		ref_event_for_group(ev, group, ref_event_enable, d);
		return 0;
	case PECS_IOC_DISABLE:
		ref_event_for_group(ev, group, ref_event_disable, d);
		return 0;
	case PECS_IOC_RESET:
		ref_event_for_group(ev, group, NULL, d);
		return 0;
	case PECS_IOC_REFRESH:
		return ioc_refresh(ev, (int)arg, d);
	case PECS_IOC_PERIOD:
		return ioc_period(ev, (const uint64_t *)arg, d);
	case PECS_IOC_SET_OUTPUT:
		return ioc_set_output(ev, arg);
	case PECS_IOC_SET_FILTER:
		/* strndup_user() faults first; no event here takes a filter, and an
		 * overlong string is EINVAL as well. */
		err = (int)ref_uaccess_strnlen_user((const void *)arg,
						    (size_t)ev->env->lim.page_size);
		return err < 0 ? err : -EINVAL;
	case PECS_IOC_ID:
		return ref_uaccess_copy_to_user((void *)arg, &ev->id, sizeof(ev->id));
	case PECS_IOC_SET_BPF:
		return ioc_set_bpf(arg);
	case PECS_IOC_PAUSE_OUTPUT:
		if (!ev->rb || ev->rb->nr_pages < 2)
			return -EINVAL;
		ref_ring_set_paused(ev->rb->ring, arg != 0);
		return 0;
	case PECS_IOC_QUERY_BPF:
		err = ref_policy_allow_query_bpf(&ev->env->policy);
		/* Only tracepoint events carry a program array. */
		return err ? err : -EINVAL;
	case PECS_IOC_MODIFY_ATTRIBUTES:
		return ioc_modify(ev, (struct pecs_attr *)arg);
	default:
		return -ENOTTY;
	}
}
