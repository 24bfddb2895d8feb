/* Helpers shared by the open, read and group cases (not part of the framework).
 *
 * They return 0 or a negative errno and record no verdict (the raw layer, safe.h), but
 * except pecs_cnt_full_group(), which ends the case where the group cannot be built.
 */
#ifndef PECS_TOOLKIT_COUNTING_H
#define PECS_TOOLKIT_COUNTING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/case.h"
#include "pecs/toolkit/event.h" /* the counting cases ask their events' ids */
#include "pecs/vectors.h"

/* The groups built here are small; layouts are checked for up to this many members. */
#define PECS_CNT_MAX_MEMBERS 8

/* pecs_attr_counting() with read_format rf. */
void pecs_cnt_attr(struct pecs_t *t, struct pecs_attr *attr, uint64_t config, uint64_t rf);

/* The read_format that fills a group's read to exactly 16 KiB with the fewest events:
 * GROUP | TOTAL_TIME_ENABLED | ID | LOST, 16 + 24 per event, 682 events, where the
 * implementation claims read.lost; else without LOST, 16 + 16 per event, 1023 events. The
 * number of events into *fit. Fewer events than GROUP alone's 2047 for the same boundary:
 * each event's teardown took Debian's RT 6.1 under emulation 20 to 35 ms. */
uint64_t pecs_cnt_format_16k(struct pecs_t *t, uint32_t *fit);

/* The group pecs_cnt_format_16k() describes, opened whole on this thread: a CPU_CLOCK
 * leader and *fit - 1 members, all with *attr (filled here), so that the group's read is
 * exactly 16 KiB. The leader's fd. An implementation whose events are fds needs one per
 * event: the soft RLIMIT_NOFILE is raised toward the hard one first. SAFE layer (safe.h),
 * at the caller's line: ENV_SKIP when the process runs out of fds, FAIL when an event
 * does not open. */
#define pecs_cnt_full_group(t, attr, fit) \
	pecs_cnt_full_group_at((t), __FILE__, __LINE__, (attr), (fit))
int pecs_cnt_full_group_at(struct pecs_t *t, const char *file, int line, struct pecs_attr *attr,
			   uint32_t *fit);

/* A counting attr of config at the start of a zeroed buffer of *len bytes, at least one
 * page plus 8, for attrs larger than struct pecs_attr. NULL when the host's page is
 * larger than the buffer. The buffer is static: one at a time. */
struct pecs_attr *pecs_cnt_big_attr(struct pecs_t *t, uint64_t config, size_t *len);

/* A group of nr TASK_CLOCK events with read_format rf, leader first in fds[0]. The leader
 * is opened disabled and the members enabled, so the whole group starts with one
 * ENABLE on the leader (a member of an already running leader may miss its first
 * schedule). On failure the fds opened so far stay open (the framework closes them). */
int pecs_cnt_open_group(struct pecs_t *t, uint64_t rf, uint32_t nr, int *fds, uint64_t *ids);

/* ENABLE, burn about ns of CPU time, DISABLE; on fd with the given ioctl arg. */
int pecs_cnt_run(struct pecs_t *t, int fd, unsigned long ioc_arg, uint64_t ns);

/* The read() size and field offsets by the rule in perf_event_open(2), derived here on
 * purpose without the vectors so that the two derivations can be compared. nr is the
 * number of group members counting the leader; it is ignored without PECS_FORMAT_GROUP.
 * The offset is -1 for a field this layout does not have. */
size_t pecs_cnt_read_size(uint64_t rf, uint32_t nr);
long pecs_cnt_offset(uint64_t rf, uint32_t nr, const char *field);

/* The read_format vector for rf and nr members (nr 1 for a single read), or NULL. */
const struct pecs_vec_read_format *pecs_cnt_vec(uint64_t rf, uint32_t nr);
/* Offset of field in v, or -1. */
long pecs_cnt_vec_offset(const struct pecs_vec_read_format *v, const char *field);
/* 0 when v agrees with pecs_cnt_read_size()/pecs_cnt_offset(); else -EINVAL with the
 * first disagreement in msg. */
int pecs_cnt_vec_agrees(const struct pecs_vec_read_format *v, char *msg, size_t msglen);

/* The u64 at byte offset off of a read() buffer. */
uint64_t pecs_cnt_u64(const void *buf, size_t off);

/* A pid that named a process a moment ago and names none now (a reaped child), or a
 * negative errno. */
pid_t pecs_cnt_dead_pid(void);

#endif /* PECS_TOOLKIT_COUNTING_H */
