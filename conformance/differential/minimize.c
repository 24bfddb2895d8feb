/* Delta debugging, greedy and deterministic: drop calls, then bring each open's inputs
 * back to the plainest values one at a time, keeping every step after which the runs
 * still differ in the same way (same call kind and same two answers). Repeats until a
 * whole pass changes nothing, so what is left is needed for the difference. */
#include <string.h>

#include "conformance/differential/diff.h"

/* Tries a changed copy; keeps it when the difference keeps its raw key. */
static int keep(const struct pecs_impl *oracle, const struct pecs_impl *impl,
		struct diff_seq *s, const struct diff_seq *t, struct diff_found *f)
{
	struct diff_found g;
	if (diff_check(oracle, impl, t, &g) != 1 || strcmp(g.raw, f->raw) != 0)
		return 0;
	*s = *t;
	*f = g;
	return 1;
}

/* The calls that named a dropped open now name an fd nobody opened, which is what the
 * executor gave them anyway; the reproducer then says so. */
static void forget(struct diff_seq *t, int id)
{
	for (int i = 0; i < t->n; i++) {
		struct diff_call *c = &t->calls[i];
		if (c->op != DIFF_OPEN && c->ref == id)
			c->ref = DIFF_BAD_REF;
		if (c->op == DIFF_OPEN && c->group == id)
			c->group = DIFF_BAD_REF;
		if (c->op == DIFF_IOCTL && c->arg_kind == ARG_FD && (int)(int64_t)c->arg == id)
			c->arg = (uint64_t)(int64_t)DIFF_BAD_REF;
	}
}

static int drop_calls(const struct pecs_impl *oracle, const struct pecs_impl *impl,
		      struct diff_seq *s, struct diff_found *f)
{
	int changed = 0;
	for (int i = s->n - 1; i >= 0; i--) {
		if (i >= s->n)
			continue;
		struct diff_seq t = *s;
		int gone = t.calls[i].id;
		memmove(&t.calls[i], &t.calls[i + 1], sizeof(t.calls[0]) * (size_t)(t.n - i - 1));
		t.n--;
		forget(&t, gone);
		changed |= keep(oracle, impl, s, &t, f);
	}
	return changed;
}

/* Field k of an open made plain; 0 when it already is (nothing to try). */
static int plain(struct diff_call *c, int k)
{
	struct pecs_attr *a = &c->attr;
	if (k < 64) {
		int had = (a->flags >> k) & 1;
		a->flags &= ~(1ull << k);
		return had;
	}
	if (k < 64 + 32) {
		int had = (a->sample_type >> (k - 64)) & 1;
		a->sample_type &= ~(1ull << (k - 64));
		return had;
	}
	if (k < 64 + 32 + 8) {
		int had = (a->read_format >> (k - 96)) & 1;
		a->read_format &= ~(1ull << (k - 96));
		return had;
	}
	struct pecs_attr z = {.type = PECS_TYPE_SOFTWARE, .size = PECS_ATTR_SIZE_LATEST};
	struct diff_call before = *c;
	switch (k - 104) {
	case 0: a->type = z.type; break;
	case 1: a->size = z.size; c->tail_byte = 0; break;
	case 2: a->config = 0; break;
	case 3: a->sample_period = 0; break;
	case 4: a->wakeup_events = 0; a->bp_type = 0; break;
	case 5: a->config1 = a->config2 = a->config3 = 0; break;
	case 6: a->branch_sample_type = a->sample_regs_user = a->sample_regs_intr = 0; break;
	case 7: a->sample_stack_user = 0; a->clockid = 0; break;
	case 8: a->aux_watermark = 0; a->aux_sample_size = 0; a->aux_action = 0; break;
	case 9: a->sample_max_stack = 0; a->sig_data = 0; break;
	case 10: c->pid = PID_SELF; break;
	case 11: c->cpu = -1; break;
	case 12: c->group = DIFF_NO_REF; break;
	case 13: c->flags = 0; break;
	default: return -1;
	}
	return memcmp(&before, c, sizeof(before)) != 0;
}

static int plain_opens(const struct pecs_impl *oracle, const struct pecs_impl *impl,
		       struct diff_seq *s, struct diff_found *f)
{
	int changed = 0;
	for (int i = 0; i < s->n; i++) {
		if (s->calls[i].op != DIFF_OPEN)
			continue;
		for (int k = 0;; k++) {
			struct diff_seq t = *s;
			int r = plain(&t.calls[i], k);
			if (r < 0)
				break;
			if (r > 0)
				changed |= keep(oracle, impl, s, &t, f);
		}
	}
	return changed;
}

void diff_minimize(const struct pecs_impl *oracle, const struct pecs_impl *impl,
		   struct diff_seq *s, struct diff_found *f)
{
	for (int pass = 0; pass < 4; pass++) {
		int changed = drop_calls(oracle, impl, s, f);
		changed |= plain_opens(oracle, impl, s, f);
		if (!changed)
			break;
	}
}
