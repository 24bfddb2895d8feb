/* The differential tool: seeded random call sequences run on a reference implementation
 * (the kernel) and on an implementation under test side by side, through the suite's
 * vtable; differences are minimized, classified and reported.
 *
 * A sequence names fds by the call that opened them (its id), never by number, so the two
 * sides (and a minimized sequence that lost some calls) each map ids to their own fds. */
#ifndef PECS_DIFFERENTIAL_DIFF_H
#define PECS_DIFFERENTIAL_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pecs/impl.h"

#define DIFF_MAX_CALLS 16
#define DIFF_NO_REF (-1)   /* group_fd/SET_OUTPUT: -1 */
#define DIFF_BAD_REF (-2)  /* an fd number nobody opened */

enum diff_op { DIFF_OPEN, DIFF_CLOSE, DIFF_READ, DIFF_IOCTL, DIFF_MMAP, DIFF_POLL };

/* How an ioctl's argument is made on each side. */
enum diff_arg { ARG_VALUE, ARG_PTR, ARG_NULL, ARG_BADPTR, ARG_FD };

enum diff_pid { PID_SELF, PID_TID, PID_ANY };

struct diff_call {
	enum diff_op op;
	int id;          /* stable name: the index the generator gave it */
	int ref;         /* the open (by id) this call acts on; DIFF_BAD_REF for a bad fd */
	/* open */
	struct pecs_attr attr;
	int tail_byte;   /* a non-zero byte past the struct the tool knows (E2BIG) */
	enum diff_pid pid;
	int cpu;         /* -1, or a CPU number (the tool runs pinned to the last CPU) */
	int group;       /* DIFF_NO_REF, DIFF_BAD_REF or an open's id */
	unsigned long flags;
	/* ioctl */
	unsigned long request;
	enum diff_arg arg_kind;
	uint64_t arg;    /* the value, the u64 behind ARG_PTR, or an open's id for ARG_FD */
	/* read */
	size_t count;
	/* mmap */
	int64_t pages;   /* the length in pages; -1 for SIZE_MAX bytes */
	int prot, mflags, offset_pages;
	int offset_byte; /* added to the offset: 1 makes it no page multiple */
	/* poll */
	short events;
};

struct diff_seq {
	uint64_t seed;
	int n;
	struct diff_call calls[DIFF_MAX_CALLS];
};

/* What one call answered, reduced to what both sides must agree on. */
struct diff_outcome {
	long ret;          /* -errno, or the value (0/1 for open: fds are not compared) */
	char shape[96];    /* read layout, E2BIG size, revents: compared as text */
	char broken[96];   /* an invariant this side broke ("" when none) */
};

struct diff_run {
	int n;
	struct diff_outcome out[DIFF_MAX_CALLS];
};

/* gen.c */
void diff_gen(struct diff_seq *s, uint64_t seed);
uint64_t diff_seq_seed(uint64_t seed, uint64_t index);

/* exec.c: 0, or -errno when the implementation's setup failed. */
int diff_exec(const struct pecs_impl *impl, const struct diff_seq *s, struct diff_run *run);
void diff_exec_init(void); /* pins to the last CPU; call once before any diff_exec */
int diff_exec_ncpus(void);

/* compare.c: index of the first call the runs disagree on, or -1. */
int diff_compare(const struct diff_seq *s, const struct diff_run *a, const struct diff_run *b);
/* "ok", "fd", an errno name, or the value. */
const char *diff_errno_name(long ret);
void diff_answer(const struct diff_seq *s, int i, const struct diff_outcome *o, char *buf,
		 size_t len);

/* format.c */
const char *diff_op_name(const struct diff_call *c);
void diff_print_call(FILE *f, const struct diff_call *c);
void diff_json_str(FILE *f, const char *s);

/* classify.c: the difference a (kernel) vs b (implementation) at call i. */
struct diff_found {
	int at;                /* call index in the sequence */
	char raw[200];         /* op|kernel answer|impl answer: before minimizing */
	char key[320];         /* raw + the attr fields that matter: the class */
};
void diff_raw_key(const struct diff_seq *s, int at, const struct diff_run *a,
		  const struct diff_run *b, char *buf, size_t len);
void diff_class_key(const struct diff_seq *s, int at, const struct diff_run *a,
		    const struct diff_run *b, char *buf, size_t len);

/* Runs s on both and fills f; 1 when they differ, 0 when not, -errno on setup failure. */
int diff_check(const struct pecs_impl *oracle, const struct pecs_impl *impl,
	       const struct diff_seq *s, struct diff_found *f);

/* minimize.c: shrinks s in place while the difference keeps its raw key; fills f. */
void diff_minimize(const struct pecs_impl *oracle, const struct pecs_impl *impl,
		   struct diff_seq *s, struct diff_found *f);

/* known.c: the divergences docs/behaviours.md keeps on purpose. */
struct diff_known {
	char id[64];
	char pattern[256]; /* fnmatch(3) pattern over class keys */
	char owner[32];    /* "kept", or who owns the fix */
};
/* Reads every `<!-- differential: ID owner PATTERN -->` line; count or -errno. */
int diff_known_load(const char *path, struct diff_known *k, int max);
const struct diff_known *diff_known_match(const struct diff_known *k, int n, const char *key);

/* session.c: a whole run of sequences seed..seed+n. */
struct diff_class {
	char key[320];
	char raw[200];
	uint64_t count;        /* minimized differences that fell in this class */
	uint64_t first;        /* index of the first sequence that showed it */
	struct diff_seq repro; /* its minimized reproducer */
	int at;
	const struct diff_known *known;
};

struct diff_raw {
	char raw[200];
	uint64_t count;     /* every difference with this raw key */
	uint64_t minimized; /* how many of them were minimized into classes */
};

struct diff_options {
	uint64_t seed;
	uint64_t sequences;
	/* Differences minimized per raw key: the first `minimize` of them, then one in
	 * `sample_every`; the rest are counted under their raw key only. */
	uint64_t minimize, sample_every;
	const struct diff_known *known;
	int nknown;
	/* The index of the first sequence run: a run cut short resumes past where it
	 * stopped with the same seed, and --first I --sequences 1 replays sequence I. */
	uint64_t first;
	/* Seconds one sequence may take on both sides (its minimizing gets four times as
	 * many); past them the run ends with status 3 naming the sequence; 0 waits forever. */
	unsigned timeout_s;
};

struct diff_result {
	uint64_t sequences, agreeing, calls, agreeing_calls;
	int nclasses, nraws;
	struct diff_class *classes;
	struct diff_raw *raws;
};

int diff_session(const struct pecs_impl *oracle, const struct pecs_impl *impl,
		 const struct diff_options *opt, struct diff_result *r);
void diff_result_free(struct diff_result *r);
/* Classes no entry of the known list matches. */
int diff_result_new_classes(const struct diff_result *r);

/* report.c */
struct diff_meta {
	const char *oracle, *impl, *identity;
};
void diff_report_text(FILE *f, const struct diff_result *r, const struct diff_options *o,
		      const struct diff_meta *m);
void diff_report_json(FILE *f, const struct diff_result *r, const struct diff_options *o,
		      const struct diff_meta *m);

#endif /* PECS_DIFFERENTIAL_DIFF_H */
