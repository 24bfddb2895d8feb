/* The pecs.user_regs blob (fxt_format.h): the registers and user stack the live sampler
 * captured for the backtrace that follows. Kept until that backtrace, which carries them
 * to the sink; any other record in between drops them. */
#include <stdlib.h>
#include <string.h>

#include "fxt_reader_impl.h"

static int is_user_regs(const uint8_t *rec, size_t words, uint64_t h)
{
	static const char name[] = REF_FXT_USER_REGS_NAME;
	uint16_t ref = (uint16_t)ref_fxt_field(h, 16, 31);
	size_t len = sizeof(name) - 1;

	/* The sampler names it inline; a table name is not looked up. */
	return ref == (REF_FXT_STRREF_INLINE | len) && words >= 1 + (len + 7) / 8 &&
	       ref_fxt_field(h, 48, 55) == REF_FXT_BLOB_DATA && !memcmp(rec + 8, name, len);
}

static int keep_stack(struct ref_fxt_reader *r, const uint8_t *p, size_t n)
{
	if (n > r->stack_cap) {
		uint8_t *b = realloc(r->stack, n);

		if (!b)
			return ref_fxt_reader_fail_nomem(r);
		r->stack = b;
		r->stack_cap = n;
	}
	if (n)
		memcpy(r->stack, p, n);
	r->stack_len = n;
	return 0;
}

int ref_fxt_reader_blob(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	static const size_t name_words = (sizeof(REF_FXT_USER_REGS_NAME) - 1 + 7) / 8;
	uint64_t h = le64(rec), abi, nr;
	size_t payload = ref_fxt_field(h, 32, 46), at = 8 * (1 + name_words);

	r->regs_pending = false;
	if (!is_user_regs(rec, words, h))
		return 1;
	if (at + (payload + 7) / 8 * 8 != words * 8 || payload < 16)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_USER_REGS);
	abi = le64(rec + at);
	nr = le64(rec + at + 8);
	if (abi > PECS_SAMPLE_REGS_ABI_64 || nr > REF_FXT_USER_REGS_MAX ||
	    16 + 8 * nr > payload || (abi == PECS_SAMPLE_REGS_ABI_NONE && payload != 16))
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_USER_REGS);
	at += 16;
	for (size_t i = 0; i < nr; i++, at += 8)
		r->regs[i] = le64(rec + at);
	if (keep_stack(r, rec + at, payload - 16 - 8 * nr))
		return r->err_ret;
	r->regs_abi = (uint32_t)abi;
	r->nr_regs = (uint32_t)nr;
	r->regs_pending = abi != PECS_SAMPLE_REGS_ABI_NONE;
	return 0;
}

void ref_fxt_reader_take_regs(struct ref_fxt_reader *r, struct pecs_sample *s)
{
	s->regs_abi = r->regs_abi;
	s->nr_regs = r->nr_regs;
	s->regs = r->regs;
	s->stack = r->stack_len ? r->stack : NULL;
	s->stack_size = (uint32_t)r->stack_len;
	r->regs_pending = false;
}
