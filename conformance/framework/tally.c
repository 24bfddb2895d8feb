/* Root causes from the answers of each entry point. A system without perf_event_open
 * fails hundreds of cases, each with its own message; the one fact behind them is that
 * every open returned ENOSYS, and that is the line a reader needs first. */
#include <stdio.h>
#include <string.h>

#include "pecs/case.h"
#include "tally.h"

static const char *const entry_names[PECS_ENTRY_COUNT] = {
	"open", "close", "read", "write", "ioctl", "mmap", "munmap", "poll",
};

const char *pecs_entry_name(enum pecs_entry e)
{
	return (unsigned)e < PECS_ENTRY_COUNT ? entry_names[e] : "?";
}

void pecs_tally_add(struct pecs_call_tally *t, long ret)
{
	t->calls++;
	if (ret >= 0) {
		t->ok++;
		return;
	}
	int e = ret > -4096 ? (int)-ret : 0;
	if (t->err == 0 && !t->mixed)
		t->err = e;
	else if (t->err != e)
		t->mixed = 1;
}

int pecs_call_failed_with(const struct pecs_call_tally *t)
{
	return t->calls > t->ok && !t->mixed ? t->err : 0;
}

void pecs_tally_sum(struct pecs_call_tally *run, const struct pecs_call_tally *one)
{
	for (int i = 0; i < PECS_ENTRY_COUNT; i++) {
		const struct pecs_call_tally *o = &one[i];
		struct pecs_call_tally *r = &run[i];
		if (!o->calls)
			continue;
		unsigned failed_before = r->calls - r->ok, failed = o->calls - o->ok;
		r->calls += o->calls;
		r->ok += o->ok;
		r->cases++;
		if (!failed)
			continue;
		if (o->mixed || (failed_before && (r->mixed || r->err != o->err)))
			r->mixed = 1;
		else
			r->err = o->err;
	}
}

int pecs_root_cause(const struct pecs_call_tally run[PECS_ENTRY_COUNT], char *buf, size_t len)
{
	size_t used = 0;
	int named = 0;
	if (len)
		buf[0] = 0;
	for (int i = 0; i < PECS_ENTRY_COUNT; i++) {
		const struct pecs_call_tally *t = &run[i];
		if (t->ok || t->mixed || !t->err || t->calls < PECS_ROOT_CAUSE_MIN_CALLS ||
		    t->cases < PECS_ROOT_CAUSE_MIN_CASES)
			continue;
		int n = snprintf(buf + used, len > used ? len - used : 0,
				 "%s%s answered every call (%u in %u cases) with -%s", named ? "; " : "",
				 pecs_entry_name(i), t->calls, t->cases, pecs_errname(t->err));
		if (n > 0 && used + (size_t)n < len)
			used += (size_t)n;
		named++;
	}
	return named;
}
