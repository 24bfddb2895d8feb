/* The pipe adapter's transport: the testee process and the frames exchanged with it
 * (docs/testee-protocol.md, "Framing"). pipe.c encodes each operation on top of it.
 *
 * One testee per process: a forked child starts its own rather than share its parent's
 * stream. A testee that exits, misses its deadline or garbles a frame ends the call, and
 * inside an isolated child the whole case (see pipe.c). */
#ifndef PECS_PIPE_TRANSPORT_H
#define PECS_PIPE_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct pipe_response {
	int64_t ret;
	uint8_t *body; /* malloc'ed, or NULL when the response has no body; the caller frees */
	size_t len;
	int fd; /* MMAP only: the fd behind the testee's mapping, owned by the caller */
};

/* Before the first call: the command run by /bin/sh as `exec <command>`, and each
 * request's deadline. The calling process becomes the main one: a testee failing any other
 * (an isolated case's child) kills that process by a signal naming the cause. SIGPIPE is
 * ignored from here on, so that a testee gone away fails the call, not the runner. */
void pipe_transport_init(const char *command, int timeout_ms);

/* The protocol version HELLO settled on: a testee started later is greeted with it. */
void pipe_transport_set_version(uint32_t version);
uint32_t pipe_transport_version(void);

/* One request and its response, starting (and greeting) a testee when this process has
 * none. extra_ms extends the deadline (a poll's own timeout). Returns 0 with *resp filled,
 * or -errno when the testee failed (it is gone then). */
long pipe_call(uint32_t op, const void *body, size_t len, struct pipe_response *resp,
	       int extra_ms);

/* A call whose only answer is its return value: that value, or -errno as above. */
long pipe_call_simple(uint32_t op, const void *body, size_t len, int extra_ms);

/* The testee serving this process now, as a number that changes whenever one is started;
 * 0 when there is none. A mapping shared with one testee went away with it. */
unsigned int pipe_transport_testee(void);

#endif /* PECS_PIPE_TRANSPORT_H */
