/* The pipe testee protocol, versions 1 and 2, as C constants and byte helpers: shared by the
 * pecs-pipe adapter and the example testee. docs/testee-protocol.md is the specification;
 * this header only names its numbers. Every integer on the wire is little-endian. */
#ifndef PECS_PIPE_WIRE_H
#define PECS_PIPE_WIRE_H

#include <stdint.h>
#include <string.h>

/* The newest version this header describes; the runner offers it and falls back to 1. */
#define PECS_PIPE_VERSION 2u
#define PECS_PIPE_VERSION_MIN 1u
/* Largest payload either side sends or accepts; a longer frame is a protocol error. */
#define PECS_PIPE_MAX_PAYLOAD (1u << 20)
/* Buffers larger than this are clamped by the adapter (a perf read is at most 16 KiB). */
#define PECS_PIPE_MAX_BUFFER 65536u

enum pecs_pipe_op {
	PECS_OP_HELLO = 1,
	PECS_OP_HOST_FACTS = 2,
	PECS_OP_SETUP = 3,
	PECS_OP_TEARDOWN = 4,
	PECS_OP_OPEN = 5,
	PECS_OP_CLOSE = 6,
	PECS_OP_READ = 7,
	PECS_OP_WRITE = 8,
	PECS_OP_IOCTL = 9,
	PECS_OP_POLL = 10,
	/* version 2: the testee's mapping travels as an fd over SCM_RIGHTS */
	PECS_OP_MMAP = 11,
	PECS_OP_MUNMAP = 12,
};

/* How a pointer argument travels: its bytes, or what kind of bad pointer it was, so the
 * testee can hand its own implementation the same kind of pointer. */
enum pecs_pipe_ptr {
	PECS_PTR_BYTES = 0,   /* the bytes follow; the testee passes a buffer holding them */
	PECS_PTR_NULL = 1,    /* the caller passed NULL */
	PECS_PTR_BAD = 2,     /* the caller passed memory it cannot access */
	PECS_PTR_INTEGER = 3, /* ioctl only: the argument is a plain integer */
};

/* Sizes of the fixed parts (after op and seq in requests; after op, seq, ret in
 * responses). */
#define PECS_REQ_HEAD 8u  /* u32 op, u32 seq */
#define PECS_RESP_HEAD 16u /* u32 op, u32 seq, i64 ret */
#define PECS_FACTS_FIXED 36u
#define PECS_MMAP_REQ 32u  /* i32 fd, i32 prot, i32 flags, u32 0, u64 length, u64 offset */
#define PECS_MMAP_RESP 16u /* u64 addr, u64 fd_offset */
#define PECS_MUNMAP_REQ 16u /* u64 addr, u64 length */

static inline void pecs_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void pecs_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void pecs_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t pecs_get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t pecs_get_u32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t pecs_get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#endif /* PECS_PIPE_WIRE_H */
