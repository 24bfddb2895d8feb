/* The recording plugin's log: what the last call of each kind brought, so a test sees
 * the interposer's routing (which fd, which argument) rather than an engine's answers. */
#ifndef PECS_INTERPOSE_RECORDER_H
#define PECS_INTERPOSE_RECORDER_H

#include <stdint.h>
#include <sys/types.h>

#define RECORDER_FIRST_FD 100 /* the plugin's fds: far from the real ones the test sees */

struct recorder_log {
	int opens, closes, reads, ioctls, mmaps, munmaps, polls;
	uint32_t open_type;
	pid_t open_pid;
	int open_cpu, open_group_fd;
	unsigned long open_flags;
	int close_fd, read_fd, ioctl_fd, mmap_fd, poll_fd;
	unsigned long ioctl_request, ioctl_arg;
	void *munmap_addr;
	int poll_timeout;
	int poll_answer; /* what poll returns, masked by the events asked */
	int task_events;   /* task_event calls, and what the last one said */
	uint32_t task_what;
	int32_t task_nr;
	uint64_t task_arg0;
	int64_t task_ret;
	char task_comm[16];
	uint32_t task_toggle; /* the last PECS_TASK_PERF_EVENTS_* told */
	int fcntls, fcntl_fd, fcntl_cmd, fcntl_sig_fd; /* the last fcntl routed */
	unsigned long fcntl_arg;
};

/* Exported by librecorder.so. */
struct recorder_log *recorder_log(void);

#endif
