/* REGS_USER, STACK_USER and REGS_INTR after kernel/events/core.c (Linux 6.12):
 * perf_prepare_sample() and perf_sample_ustack_size() for the sizes,
 * perf_output_sample_regs() and perf_output_sample_ustack() for the bytes. */
#include <string.h>

#include "record_regs.h"

/* Largest multiple of 8 a u16 header size can hold (as in record.c). */
#define RECORD_SIZE_MAX 65528u

/* x86-64's SP is register 7 (enum perf_event_x86_regs); its 4-level TASK_SIZE is
 * 2^47 - 4 KiB. */
#define X86_REG_SP 7u
#define X86_TASK_SIZE 0x7ffffffff000ull

/* perf_sample_ustack_size(): what the event asks for, at most TASK_SIZE - SP and what
 * still fits the u16 record size. The kernel shrinks the dump to fit after counting
 * the whole callchain; this engine counts the stack first and trims the callchain. */
static uint32_t ustack_size(const struct ref_record_desc *d, const struct pecs_sample *s,
			    size_t others)
{
	uint64_t n = d->stack_user;

	if (!s->regs_abi)
		return 0; /* no regs, no stack pointer, no dump */
	if (s->nr_regs > X86_REG_SP && s->regs[X86_REG_SP] < X86_TASK_SIZE &&
	    X86_TASK_SIZE - s->regs[X86_REG_SP] < n)
		n = X86_TASK_SIZE - s->regs[X86_REG_SP];
	/* others counts the size word already; dyn_size comes with any dump. */
	if (others + 8 + n > RECORD_SIZE_MAX)
		n = others + 8 < RECORD_SIZE_MAX ? RECORD_SIZE_MAX - others - 8 : 0;
	return (uint32_t)(n & ~7ull);
}

size_t ref_record_regs_stack_size(const struct ref_record_desc *d, const struct pecs_sample *s,
				  size_t size, uint32_t *ustack)
{
	uint64_t st = d->sample_type;

	*ustack = 0;
	if ((st & PECS_SAMPLE_REGS_USER) && s->regs_abi)
		size += 8 * (size_t)__builtin_popcountll(d->regs_user);
	if ((st & PECS_SAMPLE_REGS_INTR) && ref_record_has_intr_regs(s))
		size += 8 * (size_t)__builtin_popcountll(d->regs_intr);
	if (st & PECS_SAMPLE_STACK_USER) {
		*ustack = ustack_size(d, s, size);
		if (*ustack)
			size += 8 + (size_t)*ustack;
	}
	return size;
}

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

/* perf_output_sample_regs(): abi, then one u64 per mask bit from the lowest; a register
 * the capture did not reach reads 0. */
void ref_record_put_regs(uint8_t *p, const struct pecs_sample *s, uint64_t abi, uint64_t mask,
			 uint8_t **end)
{
	p = put_u64(p, abi);
	for (; abi && mask; mask &= mask - 1) {
		unsigned bit = (unsigned)__builtin_ctzll(mask);

		p = put_u64(p, bit < s->nr_regs ? s->regs[bit] : 0);
	}
	*end = p;
}

/* perf_output_sample_ustack(): the size, that many bytes from SP, then dyn_size, the
 * bytes the copy reached. The kernel skips the rest (stale ring bytes); zeros here. */
void ref_record_put_ustack(uint8_t *p, const struct pecs_sample *s, uint32_t size,
			   uint8_t **end)
{
	uint32_t dyn = s->stack_size < size ? s->stack_size : size;

	p = put_u64(p, size);
	if (size) {
		if (dyn)
			memcpy(p, s->stack, dyn);
		memset(p + dyn, 0, size - dyn);
		p = put_u64(p + size, dyn);
	}
	*end = p;
}
