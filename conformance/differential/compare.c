/* Comparing two runs of one sequence call by call: the first call whose answer differs
 * (value or errno, read layout, an invariant one side broke) is the difference. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conformance/differential/diff.h"

const char *diff_errno_name(long ret)
{
	static const struct {
		int e;
		const char *name;
	} names[] = {
		{EPERM, "EPERM"}, {ENOENT, "ENOENT"}, {ESRCH, "ESRCH"}, {EINTR, "EINTR"},
		{EBADF, "EBADF"}, {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"}, {EACCES, "EACCES"},
		{EFAULT, "EFAULT"}, {EBUSY, "EBUSY"}, {EEXIST, "EEXIST"}, {ENODEV, "ENODEV"},
		{EINVAL, "EINVAL"}, {EMFILE, "EMFILE"}, {ENOTTY, "ENOTTY"}, {ENOSPC, "ENOSPC"},
		{E2BIG, "E2BIG"}, {ENOSYS, "ENOSYS"}, {EOPNOTSUPP, "EOPNOTSUPP"},
		{EOVERFLOW, "EOVERFLOW"}, {ENOSPC, "ENOSPC"}, {ENXIO, "ENXIO"},
	};
	static char other[32];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (-ret == names[i].e)
			return names[i].name;
	snprintf(other, sizeof(other), "errno%ld", -ret);
	return other;
}

void diff_answer(const struct diff_seq *s, int i, const struct diff_outcome *o, char *buf,
		 size_t len)
{
	const struct diff_call *c = &s->calls[i];
	int n;
	if (o->ret < 0)
		n = snprintf(buf, len, "%s", diff_errno_name(o->ret));
	else if (c->op == DIFF_OPEN)
		n = snprintf(buf, len, "fd");
	else if (c->op == DIFF_READ)
		n = snprintf(buf, len, "%ldB", o->ret);
	else if (c->op == DIFF_POLL)
		n = snprintf(buf, len, "revents=%#lx", o->ret);
	else if (o->ret == 0)
		n = snprintf(buf, len, "ok");
	else
		n = snprintf(buf, len, "=%ld", o->ret);
	if (n < 0 || (size_t)n >= len)
		return;
	if (o->shape[0])
		n += snprintf(buf + n, len - (size_t)n, " %s", o->shape);
	if (o->broken[0] && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " BROKEN(%s)", o->broken);
}

static int same(const struct diff_outcome *a, const struct diff_outcome *b)
{
	return a->ret == b->ret && strcmp(a->shape, b->shape) == 0 &&
	       strcmp(a->broken, b->broken) == 0;
}

int diff_compare(const struct diff_seq *s, const struct diff_run *a, const struct diff_run *b)
{
	for (int i = 0; i < s->n; i++)
		if (!same(&a->out[i], &b->out[i]))
			return i;
	return -1;
}

int diff_check(const struct pecs_impl *oracle, const struct pecs_impl *impl,
	       const struct diff_seq *s, struct diff_found *f)
{
	static struct diff_run a, b;
	int err = diff_exec(oracle, s, &a);
	if (err < 0)
		return err;
	err = diff_exec(impl, s, &b);
	if (err < 0)
		return err;
	f->at = diff_compare(s, &a, &b);
	if (f->at < 0)
		return 0;
	diff_raw_key(s, f->at, &a, &b, f->raw, sizeof(f->raw));
	diff_class_key(s, f->at, &a, &b, f->key, sizeof(f->key));
	return 1;
}
