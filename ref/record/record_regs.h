/* The register and user-stack fields of PERF_RECORD_SAMPLE (REGS_USER, STACK_USER,
 * REGS_INTR), for record.c. Private to ref/record. */
#ifndef REF_RECORD_RECORD_REGS_H
#define REF_RECORD_RECORD_REGS_H

#include <stddef.h>
#include <stdint.h>

#include "ref/record/record.h"

static inline int ref_record_cpumode_is_kernel(uint16_t misc)
{
	switch (misc & PECS_MISC_CPUMODE_MASK) {
	case PECS_MISC_KERNEL:
	case PECS_MISC_HYPERVISOR:
	case PECS_MISC_GUEST_KERNEL:
		return 1;
	default:
		return 0;
	}
}

/* The registers REGS_INTR writes: a sample the engine took in user mode was
 * interrupted there, so they are its user registers; of another mode it has none. */
static inline int ref_record_has_intr_regs(const struct pecs_sample *s)
{
	return s->regs_abi && !ref_record_cpumode_is_kernel(s->misc);
}

/* size plus what the three fields take past the u64 each that FIXED_U64_FIELDS
 * counted; *ustack gets STACK_USER's dump size (0 for none). */
size_t ref_record_regs_stack_size(const struct ref_record_desc *d, const struct pecs_sample *s,
				  size_t size, uint32_t *ustack);

/* Write REGS_USER's or REGS_INTR's field (abi 0: the abi word alone), or STACK_USER's
 * with the size ref_record_regs_stack_size() gave, at p; *end gets the byte after. */
void ref_record_put_regs(uint8_t *p, const struct pecs_sample *s, uint64_t abi, uint64_t mask,
			 uint8_t **end);
void ref_record_put_ustack(uint8_t *p, const struct pecs_sample *s, uint32_t size,
			   uint8_t **end);

#endif /* REF_RECORD_RECORD_REGS_H */
