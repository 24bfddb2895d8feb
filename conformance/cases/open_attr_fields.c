/* perf_event_attr fields that are reserved or only valid in combination. Every case
 * starts from a user-only CPU_CLOCK counter that opens, changes one thing, and expects
 * the error; where a field has several bad values each is tried. */
#include "pecs/toolkit/counting.h"

/* Report which bad value was accepted, not just that one was. */
#define CHECK_EINVAL_EACH(t, attr, field, values)                                         \
	do {                                                                              \
		for (size_t i_ = 0; i_ < sizeof(values) / sizeof((values)[0]); i_++) {     \
			pecs_attr_counting((t), (attr), PECS_SW_CPU_CLOCK);                \
			(attr)->field = (values)[i_];                                      \
			int r_ = pecs_open((t), (attr), 0, -1, -1, 0);                     \
			PECS_CHECK_ERR((t), r_, EINVAL, #field " = 0x%llx",                \
				       (unsigned long long)(values)[i_]);                  \
		}                                                                         \
	} while (0)

PECS_CASE("Required.Open.Reserved.FlagBitsEinval", "", "OPEN-RESERVED-FLAGS-EINVAL")
{
	struct pecs_attr attr;
	uint64_t values[] = {0, 0, 0, 0, 0};
	static const int bits[] = {38, 39, 45, 55, 63};

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		values[i] = attr.flags | 1ull << bits[i];
	CHECK_EINVAL_EACH(t, &attr, flags, values);
}

PECS_CASE("Required.Open.Reserved.Reserved2Einval", "", "OPEN-RESERVED-FIELD-EINVAL")
{
	struct pecs_attr attr;
	static const uint16_t values[] = {1, 0x8000, 0xffff};

	CHECK_EINVAL_EACH(t, &attr, reserved_2, values);
}

PECS_CASE("Required.Open.Reserved.AuxActionBitsEinval", "", "OPEN-RESERVED-FIELD-EINVAL")
{
	struct pecs_attr attr;
	static const uint32_t values[] = {1u << 3, 1u << 16, 1u << 31, ~7u};

	CHECK_EINVAL_EACH(t, &attr, aux_action, values);
}

PECS_CASE("Required.Open.Reserved.SampleTypeHighBitsEinval", "", "OPEN-SAMPLE-TYPE-UNKNOWN-EINVAL")
{
	struct pecs_attr attr;
	static const uint64_t values[] = {PECS_SAMPLE_MAX, PECS_SAMPLE_MAX << 1, 1ull << 40,
					  1ull << 63};

	CHECK_EINVAL_EACH(t, &attr, sample_type, values);
}

PECS_CASE("Required.Open.Reserved.ReadFormatHighBitsEinval", "", "OPEN-READ-FORMAT-UNKNOWN-EINVAL")
{
	struct pecs_attr attr;
	static const uint64_t values[] = {PECS_FORMAT_MAX, PECS_FORMAT_MAX << 1, 1ull << 63,
					  PECS_FORMAT_MAX | PECS_FORMAT_ID};

	CHECK_EINVAL_EACH(t, &attr, read_format, values);
}

PECS_CASE("Required.Open.SampleType.WeightWithWeightStructEinval", "", "OPEN-WEIGHT-BOTH-EINVAL")
{
	struct pecs_attr attr;
	static const uint64_t values[] = {
		PECS_SAMPLE_WEIGHT | PECS_SAMPLE_WEIGHT_STRUCT,
		PECS_SAMPLE_IP | PECS_SAMPLE_WEIGHT | PECS_SAMPLE_WEIGHT_STRUCT,
	};

	CHECK_EINVAL_EACH(t, &attr, sample_type, values);
}

PECS_CASE("Required.Open.Flags.InheritThreadNeedsInheritEinval", "", "OPEN-INHERIT-THREAD-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.flags |= PECS_ATTR_INHERIT_THREAD;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
}

PECS_CASE("Required.Open.Flags.RemoveOnExecWithEnableOnExecEinval", "", "OPEN-EXEC-FLAGS-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.flags |= PECS_ATTR_REMOVE_ON_EXEC | PECS_ATTR_ENABLE_ON_EXEC;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
}

PECS_CASE("Required.Open.Flags.SigtrapNeedsRemoveOnExecEinval", "", "OPEN-SIGTRAP-EINVAL")
{
	struct pecs_attr attr;

	pecs_attr_counting(t, &attr, PECS_SW_CPU_CLOCK);
	attr.flags |= PECS_ATTR_SIGTRAP;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
	attr.flags |= PECS_ATTR_ENABLE_ON_EXEC;
	PECS_CHECK_ERR(t, pecs_open(t, &attr, 0, -1, -1, 0), EINVAL);
}
