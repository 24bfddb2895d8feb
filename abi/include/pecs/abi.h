/* The perf_event_open(2) ABI as pecs tests it: layouts and constants.
 *
 * pecs carries its own copy instead of including <linux/perf_event.h> because the
 * installed header is often older than the kernel under test (6.1's header describes
 * a 128-byte attr while 6.12+ kernels take 136). Everything here follows the UAPI
 * header of Linux 6.12; names carry a PECS_ prefix so both can be included together.
 */
#ifndef PECS_ABI_H
#define PECS_ABI_H

#include <stdint.h>

/* ---- perf_event_attr ---------------------------------------------------------- */

#define PECS_ATTR_SIZE_VER0 64u
#define PECS_ATTR_SIZE_VER1 72u
#define PECS_ATTR_SIZE_VER2 80u
#define PECS_ATTR_SIZE_VER3 96u
#define PECS_ATTR_SIZE_VER4 104u
#define PECS_ATTR_SIZE_VER5 112u
#define PECS_ATTR_SIZE_VER6 120u
#define PECS_ATTR_SIZE_VER7 128u
#define PECS_ATTR_SIZE_VER8 136u
#define PECS_ATTR_SIZE_LATEST PECS_ATTR_SIZE_VER8

/* The attr's bit-field word is kept as one u64 so that tests can set reserved bits
 * and implementations can check them with a mask. */
struct pecs_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period; /* or sample_freq when PECS_ATTR_FREQ */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags; /* PECS_ATTR_* bits */
	uint32_t wakeup_events; /* or wakeup_watermark when PECS_ATTR_WATERMARK */
	uint32_t bp_type;
	uint64_t config1;
	uint64_t config2;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint16_t reserved_2;
	uint32_t aux_sample_size;
	uint32_t aux_action; /* bit 0 start_paused, 1 pause, 2 resume; 3..31 reserved */
	uint64_t sig_data;
	uint64_t config3;
};

#define PECS_ATTR_DISABLED (1ull << 0)
#define PECS_ATTR_INHERIT (1ull << 1)
#define PECS_ATTR_PINNED (1ull << 2)
#define PECS_ATTR_EXCLUSIVE (1ull << 3)
#define PECS_ATTR_EXCLUDE_USER (1ull << 4)
#define PECS_ATTR_EXCLUDE_KERNEL (1ull << 5)
#define PECS_ATTR_EXCLUDE_HV (1ull << 6)
#define PECS_ATTR_EXCLUDE_IDLE (1ull << 7)
#define PECS_ATTR_MMAP (1ull << 8)
#define PECS_ATTR_COMM (1ull << 9)
#define PECS_ATTR_FREQ (1ull << 10)
#define PECS_ATTR_INHERIT_STAT (1ull << 11)
#define PECS_ATTR_ENABLE_ON_EXEC (1ull << 12)
#define PECS_ATTR_TASK (1ull << 13)
#define PECS_ATTR_WATERMARK (1ull << 14)
#define PECS_ATTR_PRECISE_IP_SHIFT 15 /* two bits */
#define PECS_ATTR_MMAP_DATA (1ull << 17)
#define PECS_ATTR_SAMPLE_ID_ALL (1ull << 18)
#define PECS_ATTR_EXCLUDE_HOST (1ull << 19)
#define PECS_ATTR_EXCLUDE_GUEST (1ull << 20)
#define PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL (1ull << 21)
#define PECS_ATTR_EXCLUDE_CALLCHAIN_USER (1ull << 22)
#define PECS_ATTR_MMAP2 (1ull << 23)
#define PECS_ATTR_COMM_EXEC (1ull << 24)
#define PECS_ATTR_USE_CLOCKID (1ull << 25)
#define PECS_ATTR_CONTEXT_SWITCH (1ull << 26)
#define PECS_ATTR_WRITE_BACKWARD (1ull << 27)
#define PECS_ATTR_NAMESPACES (1ull << 28)
#define PECS_ATTR_KSYMBOL (1ull << 29)
#define PECS_ATTR_BPF_EVENT (1ull << 30)
#define PECS_ATTR_AUX_OUTPUT (1ull << 31)
#define PECS_ATTR_CGROUP (1ull << 32)
#define PECS_ATTR_TEXT_POKE (1ull << 33)
#define PECS_ATTR_BUILD_ID (1ull << 34)
#define PECS_ATTR_INHERIT_THREAD (1ull << 35)
#define PECS_ATTR_REMOVE_ON_EXEC (1ull << 36)
#define PECS_ATTR_SIGTRAP (1ull << 37)
#define PECS_ATTR_RESERVED_MASK (~0ull << 38)

#define PECS_AUX_ACTION_RESERVED_MASK (~0u << 3)

/* ---- types and configs -------------------------------------------------------- */

enum pecs_type {
	PECS_TYPE_HARDWARE = 0,
	PECS_TYPE_SOFTWARE = 1,
	PECS_TYPE_TRACEPOINT = 2,
	PECS_TYPE_HW_CACHE = 3,
	PECS_TYPE_RAW = 4,
	PECS_TYPE_BREAKPOINT = 5,
};

enum pecs_sw_config {
	PECS_SW_CPU_CLOCK = 0,
	PECS_SW_TASK_CLOCK = 1,
	PECS_SW_PAGE_FAULTS = 2,
	PECS_SW_CONTEXT_SWITCHES = 3,
	PECS_SW_CPU_MIGRATIONS = 4,
	PECS_SW_PAGE_FAULTS_MIN = 5,
	PECS_SW_PAGE_FAULTS_MAJ = 6,
	PECS_SW_ALIGNMENT_FAULTS = 7,
	PECS_SW_EMULATION_FAULTS = 8,
	PECS_SW_DUMMY = 9,
	PECS_SW_BPF_OUTPUT = 10,
	PECS_SW_CGROUP_SWITCHES = 11,
	PECS_SW_MAX = 12,
};

/* ---- sample_type and read_format ------------------------------------------------ */

#define PECS_SAMPLE_IP (1ull << 0)
#define PECS_SAMPLE_TID (1ull << 1)
#define PECS_SAMPLE_TIME (1ull << 2)
#define PECS_SAMPLE_ADDR (1ull << 3)
#define PECS_SAMPLE_READ (1ull << 4)
#define PECS_SAMPLE_CALLCHAIN (1ull << 5)
#define PECS_SAMPLE_ID (1ull << 6)
#define PECS_SAMPLE_CPU (1ull << 7)
#define PECS_SAMPLE_PERIOD (1ull << 8)
#define PECS_SAMPLE_STREAM_ID (1ull << 9)
#define PECS_SAMPLE_RAW (1ull << 10)
#define PECS_SAMPLE_BRANCH_STACK (1ull << 11)
#define PECS_SAMPLE_REGS_USER (1ull << 12)
#define PECS_SAMPLE_STACK_USER (1ull << 13)
#define PECS_SAMPLE_WEIGHT (1ull << 14)
#define PECS_SAMPLE_DATA_SRC (1ull << 15)
#define PECS_SAMPLE_IDENTIFIER (1ull << 16)
#define PECS_SAMPLE_TRANSACTION (1ull << 17)
#define PECS_SAMPLE_REGS_INTR (1ull << 18)
#define PECS_SAMPLE_PHYS_ADDR (1ull << 19)
#define PECS_SAMPLE_AUX (1ull << 20)
#define PECS_SAMPLE_CGROUP (1ull << 21)
#define PECS_SAMPLE_DATA_PAGE_SIZE (1ull << 22)
#define PECS_SAMPLE_CODE_PAGE_SIZE (1ull << 23)
#define PECS_SAMPLE_WEIGHT_STRUCT (1ull << 24)
#define PECS_SAMPLE_MAX (1ull << 25)

#define PECS_FORMAT_TOTAL_TIME_ENABLED (1ull << 0)
#define PECS_FORMAT_TOTAL_TIME_RUNNING (1ull << 1)
#define PECS_FORMAT_ID (1ull << 2)
#define PECS_FORMAT_GROUP (1ull << 3)
#define PECS_FORMAT_LOST (1ull << 4)
#define PECS_FORMAT_MAX (1ull << 5)

/* ---- perf_event_open flags ------------------------------------------------------ */

#define PECS_FLAG_FD_NO_GROUP (1ul << 0)
#define PECS_FLAG_FD_OUTPUT (1ul << 1)
#define PECS_FLAG_PID_CGROUP (1ul << 2)
#define PECS_FLAG_FD_CLOEXEC (1ul << 3)

/* ---- ioctl requests (x86-64 encodings, matched exactly by the kernel) ----------- */

#define PECS_IOC_ENABLE 0x2400ul
#define PECS_IOC_DISABLE 0x2401ul
#define PECS_IOC_REFRESH 0x2402ul
#define PECS_IOC_RESET 0x2403ul
#define PECS_IOC_PERIOD 0x40082404ul
#define PECS_IOC_SET_OUTPUT 0x2405ul
#define PECS_IOC_SET_FILTER 0x40082406ul
#define PECS_IOC_ID 0x80082407ul
#define PECS_IOC_SET_BPF 0x40042408ul
#define PECS_IOC_PAUSE_OUTPUT 0x40042409ul
#define PECS_IOC_QUERY_BPF 0xc008240aul
#define PECS_IOC_MODIFY_ATTRIBUTES 0x4008240bul
#define PECS_IOC_FLAG_GROUP 1u

/* ---- the metadata page --------------------------------------------------------- */

struct pecs_mmap_page {
	uint32_t version;
	uint32_t compat_version;
	uint32_t lock;
	uint32_t index;
	int64_t offset;
	uint64_t time_enabled;
	uint64_t time_running;
	uint64_t capabilities;
	uint16_t pmc_width;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_offset;
	uint64_t time_zero;
	uint32_t size;
	uint32_t reserved_1;
	uint64_t time_cycles;
	uint64_t time_mask;
	uint8_t reserved[928];
	uint64_t data_head;
	uint64_t data_tail;
	uint64_t data_offset;
	uint64_t data_size;
	uint64_t aux_head;
	uint64_t aux_tail;
	uint64_t aux_offset;
	uint64_t aux_size;
};

#define PECS_CAP_BIT0 (1ull << 0)
#define PECS_CAP_BIT0_IS_DEPRECATED (1ull << 1)
#define PECS_CAP_USER_RDPMC (1ull << 2)
#define PECS_CAP_USER_TIME (1ull << 3)
#define PECS_CAP_USER_TIME_ZERO (1ull << 4)
#define PECS_CAP_USER_TIME_SHORT (1ull << 5)

/* ---- records ------------------------------------------------------------------ */

struct pecs_record_header {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
};

enum pecs_record_type {
	PECS_RECORD_MMAP = 1,
	PECS_RECORD_LOST = 2,
	PECS_RECORD_COMM = 3,
	PECS_RECORD_EXIT = 4,
	PECS_RECORD_THROTTLE = 5,
	PECS_RECORD_UNTHROTTLE = 6,
	PECS_RECORD_FORK = 7,
	PECS_RECORD_READ = 8,
	PECS_RECORD_SAMPLE = 9,
};

#define PECS_MISC_CPUMODE_MASK 7u
#define PECS_MISC_CPUMODE_UNKNOWN 0u
#define PECS_MISC_KERNEL 1u
#define PECS_MISC_USER 2u
#define PECS_MISC_HYPERVISOR 3u
#define PECS_MISC_GUEST_KERNEL 4u
#define PECS_MISC_GUEST_USER 5u
#define PECS_MISC_EXACT_IP (1u << 14)

#define PECS_CONTEXT_HV ((uint64_t)-32)
#define PECS_CONTEXT_KERNEL ((uint64_t)-128)
#define PECS_CONTEXT_USER ((uint64_t)-512)
#define PECS_CONTEXT_GUEST ((uint64_t)-2048)
#define PECS_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define PECS_CONTEXT_GUEST_USER ((uint64_t)-2560)
#define PECS_CONTEXT_MAX ((uint64_t)-4095)

/* Values the kernel writes for fields a software event has nothing to report in. */
#define PECS_DATA_SRC_NA 0x1e05080021ull

/* Largest read() a group may need before open refuses it with E2BIG. */
#define PECS_READ_SIZE_MAX (16u * 1024u)

#endif /* PECS_ABI_H */
