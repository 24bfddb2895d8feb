/* Recognizers for the markup reader's two commonest lines in their plainest form: the
 * next frame of a block, "{{{bt:NR:0xADDR}}}\n" (or with ":pc" or ":ra") where NR is
 * the number of frames already in the block, and an id line, "DIGITS\n". Each either
 * accepts a line that the reader's per-line path would read to the same values, or
 * returns 0 and leaves the line to that path, so no verdict depends on which path read
 * a line.
 *
 * They read words, not bytes (a byte loop was most of a line's cost), and up to
 * MARKUP_SCAN_SLACK bytes from the line's start whatever its length: the caller uses
 * them only where that many bytes lie in the buffer. On x86-64 an address's 16 possible
 * digits are checked and converted in one SSE2 register; elsewhere in two words
 * (markup_scan_hex16_words(), which a unit test holds to the same results).
 * Private to ref/stream; little-endian hosts only (MARKUP_SCAN_WORDS). */
#ifndef REF_STREAM_MARKUP_SCAN_H
#define REF_STREAM_MARKUP_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && defined(__x86_64__)
#define MARKUP_SCAN_SSE2 1
#include <emmintrin.h>
#endif

#define MARKUP_SCAN_WORDS (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
/* A frame line reads its first 16 bytes, 16 address bytes from +10..+12 and 8 after
 * the digits: at most 36 bytes; an id line 9. */
#define MARKUP_SCAN_SLACK 40

#define MS_BYTES(b) (0x0101010101010101ull * (b))
#define MS_HIGH MS_BYTES(0x80)

static inline uint64_t ms_load(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Per byte of x: 0x80 where its low 7 bits are >= n (n <= 0x80), else 0. The OR keeps
 * each byte's subtraction from borrowing from the next. */
static inline uint64_t ms_ge(uint64_t x, unsigned n)
{
	return ((x | MS_HIGH) - MS_BYTES(n)) & MS_HIGH;
}

/* 0x80 in each byte of x that is '0'..'9' (bytes >= 0x80 are not). */
static inline uint64_t ms_dec_mask(uint64_t x)
{
	return ms_ge(x, '0') & ~ms_ge(x, '9' + 1) & ~x & MS_HIGH;
}

/* 0x80 in each byte that is 'a'..'f' or 'A'..'F': x | 0x20 is in 'a'..'f' for those only. */
static inline uint64_t ms_alpha_mask(uint64_t x)
{
	uint64_t l = x | MS_BYTES(0x20);

	return ms_ge(l, 'a') & ~ms_ge(l, 'f' + 1) & ~x & MS_HIGH;
}

/* How many of the first bytes (the lowest) have their 0x80 set in mask m: 0..8. */
static inline unsigned ms_lead(uint64_t m)
{
	uint64_t gap = ~m & MS_HIGH;

	return gap ? (unsigned)__builtin_ctzll(gap) >> 3 : 8;
}

/* The first n (1..8) bytes of x, all decimal digits, as a number: the digits are moved
 * to the top, zeros before them, and summed pairwise (10, 100, 10^4 a step). */
static inline uint64_t ms_dec(uint64_t x, unsigned n)
{
	x = (x & MS_BYTES(0x0f)) << (8 * (8 - n));
	x = (x * (1 + (10 << 8))) >> 8 & 0x00ff00ff00ff00ffull;
	x = (x * (1 + (100 << 16))) >> 16 & 0x0000ffff0000ffffull;
	return (x * (1 + (10000ull << 32))) >> 32;
}

/* The 8 bytes of x as 8 hex digits, the first byte the most significant; alpha is
 * ms_alpha_mask(x). A byte that is not a digit gives a nibble of garbage. */
static inline uint64_t ms_hex(uint64_t x, uint64_t alpha)
{
	/* '0'..'9' end in their value; 'a'/'A'..'f'/'F' in 1..6, 9 short of theirs. */
	uint64_t nib = ((x & MS_BYTES(0x0f)) + (alpha >> 7) * 9) & MS_BYTES(0x0f), t;

	t = ((nib & 0x0f000f000f000f00ull) >> 8) | ((nib & 0x000f000f000f000full) << 4);
	t = ((t & 0x000000ff000000ffull) << 8) | ((t & 0x00ff000000ff0000ull) >> 16);
	return (t & 0xffff) << 16 | ((t >> 32) & 0xffff);
}

/* Eight hex digits at p as one number: 1, or 0 when any of them is not a hex digit
 * (and on a big-endian host, which then reads them a byte at a time). */
static inline int ms_hex8(const char *p, uint64_t *out)
{
	uint64_t x, alpha;

	if (!MARKUP_SCAN_WORDS)
		return 0;
	x = ms_load(p);
	alpha = ms_alpha_mask(x);
	if ((alpha | ms_dec_mask(x)) != MS_HIGH)
		return 0;
	*out = ms_hex(x, alpha);
	return 1;
}

/* The 16 bytes at p: returns a mask with bit i set when byte i is a hex digit, and in
 * *val the 16 of them read as one hex number (digits that are not give garbage). */
static inline unsigned markup_scan_hex16_words(const char *p, uint64_t *val)
{
	uint64_t a = ms_load(p), b = ms_load(p + 8), aa = ms_alpha_mask(a),
		 ab = ms_alpha_mask(b), ma = (aa | ms_dec_mask(a)) >> 7,
		 mb = (ab | ms_dec_mask(b)) >> 7;

	*val = ms_hex(a, aa) << 32 | ms_hex(b, ab);
	/* gather each byte's flag (now bit 0 of the byte) into bit i */
	return (unsigned)((ma * 0x0102040810204080ull) >> 56 |
			  ((mb * 0x0102040810204080ull) >> 56) << 8);
}

#ifdef MARKUP_SCAN_SSE2
static inline unsigned markup_scan_hex16(const char *p, uint64_t *val)
{
	const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	/* x - c as unsigned bytes is <= k exactly when min(x - c, k) is x - c */
	const __m128i d = _mm_sub_epi8(v, _mm_set1_epi8('0'));
	const __m128i a = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
	const __m128i dig = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
	const __m128i alpha = _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(5)), a);
	__m128i nib = _mm_or_si128(_mm_and_si128(dig, d),
				   _mm_and_si128(alpha, _mm_add_epi8(a, _mm_set1_epi8(10))));

	/* Each 16-bit lane holds digits 2k (low byte) and 2k+1: into one byte, then the 8
	 * bytes side by side, the first the most significant once byte-swapped. */
	nib = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(nib, 4), _mm_srli_epi16(nib, 8)),
			    _mm_set1_epi16(0xff));
	*val = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(nib, nib)));
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(dig, alpha));
}
#else
#define markup_scan_hex16 markup_scan_hex16_words
#endif

#define MS_CH(c, i) ((uint64_t)(unsigned char)(c) << (8 * (i)))
/* "N:0x" for a frame index N below 1000, and its length. */
#define MS_IDX_TEXT(n)                                                                  \
	((n) < 10    ? MS_CH('0' + (n), 0) | MS_CH(':', 1) | MS_CH('0', 2) | MS_CH('x', 3) \
	 : (n) < 100 ? MS_CH('0' + (n) / 10, 0) | MS_CH('0' + (n) % 10, 1) | MS_CH(':', 2) | \
			       MS_CH('0', 3) | MS_CH('x', 4)                                  \
		     : MS_CH('0' + (n) / 100, 0) | MS_CH('0' + (n) / 10 % 10, 1) |             \
			       MS_CH('0' + (n) % 10, 2) | MS_CH(':', 3) | MS_CH('0', 4) |     \
			       MS_CH('x', 5))
#define MS_IDX_LEN(n) ((n) < 10 ? 4u : (n) < 100 ? 5u : 6u)
#define MS_BT                                                                           \
	(MS_CH('{', 0) | MS_CH('{', 1) | MS_CH('{', 2) | MS_CH('b', 3) | MS_CH('t', 4) |   \
	 MS_CH(':', 5))
#define MS_MASK(n) ((n) >= 8 ? ~0ull : (1ull << (8 * (n))) - 1)
#define MS_IDX(n)                                                                       \
	{ MS_BT | MS_IDX_TEXT(n) << 48, MS_IDX_TEXT(n) >> 16, MS_MASK(MS_IDX_LEN(n) - 2),   \
	  6 + MS_IDX_LEN(n) }
#define MS_IDX4(n) MS_IDX(n), MS_IDX((n) + 1), MS_IDX((n) + 2), MS_IDX((n) + 3)
#define MS_IDX16(n) MS_IDX4(n), MS_IDX4((n) + 4), MS_IDX4((n) + 8), MS_IDX4((n) + 12)
#define MS_IDX64(n) MS_IDX16(n), MS_IDX16((n) + 16), MS_IDX16((n) + 32), MS_IDX16((n) + 48)

/* Frame NR's line up to its address digits, "{{{bt:NR:0x": its first 8 bytes, the rest
 * and their mask, and its length; for NR 0..255 (a block holds at most
 * REF_STREAM_MAX_FRAMES). "0X" and leading zeros are left to the per-line path. */
struct ms_idx {
	uint64_t w0, w1, mask1, skip;
};

static const struct ms_idx ms_idx[256] = {
	MS_IDX64(0), MS_IDX64(64), MS_IDX64(128), MS_IDX64(192),
};

/* A literal of up to 8 characters as the word its bytes make; folded by the compiler. */
static inline uint64_t ms_lit(const char s[8])
{
	return ms_load(s);
}

/* The line at p if it is the frame x describes: its length with the newline and *addr,
 * or 0 (another index, a blank, 17 digits, ... are the per-line path's). */
static inline size_t markup_scan_frame(const char *p, const struct ms_idx *x, uint64_t *addr)
{
	const char *q = p + x->skip;
	uint64_t w, v;
	unsigned ok, h;

	if (((ms_load(p) ^ x->w0) | ((ms_load(p + 8) ^ x->w1) & x->mask1)) != 0)
		return 0;
	ok = markup_scan_hex16(q, &v);
	h = (unsigned)__builtin_ctz(~ok); /* 16 when all are: a 17th fails below */
	if (!h)
		return 0;
	q += h;
	w = ms_load(q) & MS_MASK(7);
	if (w == ms_lit(":ra}}}\n") || w == ms_lit(":pc}}}\n"))
		q += 7;
	else if ((w & MS_MASK(4)) == (ms_lit("}}}\n\0\0\0") & MS_MASK(4)))
		q += 4;
	else
		return 0;
	*addr = v >> (4 * (16 - h));
	return (size_t)(q - p);
}

/* An id line at p, 1 to 8 digits and the newline: its length with the newline and *v;
 * or 0. */
static inline size_t markup_scan_id(const char *p, uint64_t *v)
{
	uint64_t w = ms_load(p);
	unsigned n = ms_lead(ms_dec_mask(w));

	if (!n || p[n] != '\n')
		return 0;
	*v = ms_dec(w, n);
	return n + 1;
}

#endif
