"""Field tables of the perf_event_open(2) ABI, transcribed by hand.

Everything here was typed from include/uapi/linux/perf_event.h and
include/uapi/asm-generic/ioctl.h of Linux 6.12 and from the perf_event_open(2) man page.
It deliberately does not read pecs' C headers: the vectors built from these tables are
one of two independent derivations of each layout, and the C cases' own expectations
are the other.
"""

U32 = 4
U64 = 8

# enum perf_event_sample_format
SAMPLE_BITS = {
    "IP": 0,
    "TID": 1,
    "TIME": 2,
    "ADDR": 3,
    "READ": 4,
    "CALLCHAIN": 5,
    "ID": 6,
    "CPU": 7,
    "PERIOD": 8,
    "STREAM_ID": 9,
    "RAW": 10,
    "BRANCH_STACK": 11,
    "REGS_USER": 12,
    "STACK_USER": 13,
    "WEIGHT": 14,
    "DATA_SRC": 15,
    "IDENTIFIER": 16,
    "TRANSACTION": 17,
    "REGS_INTR": 18,
    "PHYS_ADDR": 19,
    "AUX": 20,
    "CGROUP": 21,
    "DATA_PAGE_SIZE": 22,
    "CODE_PAGE_SIZE": 23,
    "WEIGHT_STRUCT": 24,
}


def sample(*names: str) -> int:
    """The sample_type word with the named PERF_SAMPLE_* bits set."""
    word = 0
    for name in names:
        word |= 1 << SAMPLE_BITS[name]
    return word


# enum perf_event_read_format
FORMAT_TOTAL_TIME_ENABLED = 1 << 0
FORMAT_TOTAL_TIME_RUNNING = 1 << 1
FORMAT_ID = 1 << 2
FORMAT_GROUP = 1 << 3
FORMAT_LOST = 1 << 4

# The four bits that add optional u64 words; GROUP changes the shape instead.
FORMAT_OPTIONAL_BITS = (
    FORMAT_TOTAL_TIME_ENABLED,
    FORMAT_TOTAL_TIME_RUNNING,
    FORMAT_ID,
    FORMAT_LOST,
)

# PERF_RECORD_SAMPLE and the cpumode the kernel reports for a user-space sample.
RECORD_SAMPLE = 9
MISC_USER = 2
HEADER_SIZE = 8

# enum perf_callchain_context, as the u64 the kernel stores in the chain.
CONTEXT_USER = (1 << 64) - 512

# PERF_MEM_NA from include/linux/perf_event.h, built from the UAPI's per-field
# "not available" codes and shifts; what perf_prepare_sample() stores for DATA_SRC
# when the PMU supplies nothing (every software event).
_MEM_NA_PARTS = (  # (code, shift)
    (0x01, 0),  # PERF_MEM_OP_NA
    (0x01, 5),  # PERF_MEM_LVL_NA
    (0x01, 19),  # PERF_MEM_SNOOP_NA
    (0x01, 24),  # PERF_MEM_LOCK_NA
    (0x01, 26),  # PERF_MEM_TLB_NA
    (0x0F, 33),  # PERF_MEM_LVLNUM_NA
)
MEM_NA = sum(code << shift for code, shift in _MEM_NA_PARTS)

# struct perf_event_attr: (field, size), in declaration order. Unions are listed by
# their first member; bit fields are the one u64 word "flags".
ATTR_FIELDS = (
    ("type", U32),
    ("size", U32),
    ("config", U64),
    ("sample_period", U64),
    ("sample_type", U64),
    ("read_format", U64),
    ("flags", U64),
    ("wakeup_events", U32),
    ("bp_type", U32),
    ("config1", U64),
    ("config2", U64),
    ("branch_sample_type", U64),
    ("sample_regs_user", U64),
    ("sample_stack_user", U32),
    ("clockid", 4),
    ("sample_regs_intr", U64),
    ("aux_watermark", U32),
    ("sample_max_stack", 2),
    ("__reserved_2", 2),
    ("aux_sample_size", U32),
    ("aux_action", U32),
    ("sig_data", U64),
    ("config3", U64),
)

# PERF_ATTR_SIZE_VERn and the first field each version added (the header's "add:"
# comments); VER0 is the first published struct, so its first field is `type`.
ATTR_VERSIONS = (
    ("PERF_ATTR_SIZE_VER0", 64, "type"),
    ("PERF_ATTR_SIZE_VER1", 72, "config2"),
    ("PERF_ATTR_SIZE_VER2", 80, "branch_sample_type"),
    ("PERF_ATTR_SIZE_VER3", 96, "sample_regs_user"),
    ("PERF_ATTR_SIZE_VER4", 104, "sample_regs_intr"),
    ("PERF_ATTR_SIZE_VER5", 112, "aux_watermark"),
    ("PERF_ATTR_SIZE_VER6", 120, "aux_sample_size"),
    ("PERF_ATTR_SIZE_VER7", 128, "sig_data"),
    ("PERF_ATTR_SIZE_VER8", 136, "config3"),
)

# struct perf_event_mmap_page: (field, size, signed). Offsets are not written down
# here; the generator lays the fields out with natural alignment, as the C compiler
# does for this struct on x86-64.
MMAP_PAGE_FIELDS = (
    ("version", U32, False),
    ("compat_version", U32, False),
    ("lock", U32, False),
    ("index", U32, False),
    ("offset", U64, True),
    ("time_enabled", U64, False),
    ("time_running", U64, False),
    ("capabilities", U64, False),
    ("pmc_width", 2, False),
    ("time_shift", 2, False),
    ("time_mult", U32, False),
    ("time_offset", U64, False),
    ("time_zero", U64, False),
    ("size", U32, False),
    ("__reserved_1", U32, False),
    ("time_cycles", U64, False),
    ("time_mask", U64, False),
    ("__reserved", 116 * 8, False),
    ("data_head", U64, False),
    ("data_tail", U64, False),
    ("data_offset", U64, False),
    ("data_size", U64, False),
    ("aux_head", U64, False),
    ("aux_tail", U64, False),
    ("aux_offset", U64, False),
    ("aux_size", U64, False),
)

# The bit fields overlaying perf_event_mmap_page.capabilities, lowest bit first.
MMAP_CAPABILITY_BITS = (
    "cap_bit0",
    "cap_bit0_is_deprecated",
    "cap_user_rdpmc",
    "cap_user_time",
    "cap_user_time_zero",
    "cap_user_time_short",
)

# include/uapi/asm-generic/ioctl.h as x86-64 uses it.
IOC_NRBITS = 8
IOC_TYPEBITS = 8
IOC_SIZEBITS = 14
IOC_NRSHIFT = 0
IOC_TYPESHIFT = IOC_NRSHIFT + IOC_NRBITS
IOC_SIZESHIFT = IOC_TYPESHIFT + IOC_TYPEBITS
IOC_DIRSHIFT = IOC_SIZESHIFT + IOC_SIZEBITS
IOC_NONE = 0
IOC_WRITE = 1
IOC_READ = 2

PERF_IOC_TYPE = ord("$")

# PERF_EVENT_IOC_*: (name, macro, nr, argument size in bytes). The argument types
# are those named in the header (__u64, char *, __u64 *, __u32, pointers).
IOCTLS = (
    ("PERF_EVENT_IOC_ENABLE", "_IO", 0, 0),
    ("PERF_EVENT_IOC_DISABLE", "_IO", 1, 0),
    ("PERF_EVENT_IOC_REFRESH", "_IO", 2, 0),
    ("PERF_EVENT_IOC_RESET", "_IO", 3, 0),
    ("PERF_EVENT_IOC_PERIOD", "_IOW", 4, U64),
    ("PERF_EVENT_IOC_SET_OUTPUT", "_IO", 5, 0),
    ("PERF_EVENT_IOC_SET_FILTER", "_IOW", 6, U64),
    ("PERF_EVENT_IOC_ID", "_IOR", 7, U64),
    ("PERF_EVENT_IOC_SET_BPF", "_IOW", 8, U32),
    ("PERF_EVENT_IOC_PAUSE_OUTPUT", "_IOW", 9, U32),
    ("PERF_EVENT_IOC_QUERY_BPF", "_IOWR", 10, U64),
    ("PERF_EVENT_IOC_MODIFY_ATTRIBUTES", "_IOW", 11, U64),
)
