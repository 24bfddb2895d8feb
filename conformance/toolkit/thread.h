/* A second thread of the case's process for the cases that watch another task: it spins
 * in user space until told to stop, and the case can wait until the kernel has finished
 * it. The thread also stops by itself after a few seconds, so a case that ends early
 * never leaves it burning a CPU under the next case. */
#ifndef PECS_TOOLKIT_THREAD_H
#define PECS_TOOLKIT_THREAD_H

#include <pthread.h>
#include <sys/types.h>

struct pecs_spinner {
	pthread_t th;
	/* Shared with the thread: release stores, acquire loads (volatile orders nothing). */
	int stop;
	pid_t tid;
	int joined;
};

/* Start the thread and wait for its tid. 0 or -errno. */
int pecs_spinner_start(struct pecs_spinner *s);

/* Stop and join the thread, then wait (at most 2 s) until its /proc/self/task entry is
 * gone: by then the kernel has run its exit path, perf's included. 0, or -ETIMEDOUT. */
int pecs_spinner_finish(struct pecs_spinner *s);

#endif /* PECS_TOOLKIT_THREAD_H */
