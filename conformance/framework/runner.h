/* The suite's runner core, shared by the cmocka driver and the standalone binary so that
 * both give the same verdicts and gate them the same way. Private to conformance/. */
#ifndef PECS_RUNNER_H
#define PECS_RUNNER_H

#include <stddef.h>
#include <stdio.h>

#include "pecs/case.h"
#include "pecs/impl.h"
#include "conformance/framework/impl_check.h"
#include "tally.h"

/* The suite version: the git commit the runner was built from (a stamped runner), or
 * "unknown" / "unstamped". Defined by the library main_*.c is linked with. */
extern const char pecs_suite_version[];

/* ---- registry ---- */

/* All linked cases, sorted by id. */
const struct pecs_case *const *pecs_registry(size_t *count);
const struct pecs_case *pecs_registry_find(const char *id);

/* ---- features ---- */

/* 0 when every feature c needs is a known name and c names a behaviour; else -EINVAL
 * with why in msg. */
int pecs_case_features_check(const struct pecs_case *c, char *msg, size_t msglen);

/* 1 with the first feature c needs that impl does not claim in buf, else 0. */
int pecs_case_missing_feature(const struct pecs_impl *impl, const struct pecs_case *c, char *buf,
			      size_t len);

/* ---- names ---- */

const char *pecs_status_name(enum pecs_status s); /* "PASS", "ENV_SKIP", ... */
int pecs_status_parse(const char *name, enum pecs_status *out);

/* ---- host facts ---- */

/* This host's facts as the suite sees them, then overridden by impl->host_facts. */
void pecs_host_defaults(struct pecs_host_facts *facts);

/* The stable release a Debian kernel builds, from uname's version ("... Debian 6.1.176-1
 * (2025-...)") when its X.Y is the release's ("6.1.0-50-cloud-amd64"): "6.1.176" into out,
 * and 1. 0 when the version names none, and out is left alone. */
int pecs_release_point(const char *release, const char *version, char *out, size_t len);

/* Where each host fact came from, so a guess is never read as an answer. */
enum pecs_fact {
	PECS_FACT_NCPUS,
	PECS_FACT_PAGE_SIZE,
	PECS_FACT_MAX_STACK,
	PECS_FACT_MAX_SAMPLE_RATE,
	PECS_FACT_MLOCK_KB,
	PECS_FACT_PARANOID,
	PECS_FACT_PRIVILEGED,
	PECS_FACT_ATTR_SIZE,
	PECS_FACT_KERNEL_RELEASE,
	PECS_FACT_COUNT
};
extern const char *const pecs_fact_names[PECS_FACT_COUNT];
struct pecs_fact_sources {
	char of[PECS_FACT_COUNT][160]; /* "/proc/sys/...", "implementation", "assumed ..." */
};
void pecs_host_defaults_sourced(struct pecs_host_facts *facts, struct pecs_fact_sources *src);

/* 1 with one line in line when impl answers the simplest open (a user-only task clock)
 * with ENOSYS: the call itself is missing. 0 otherwise, whatever else it answers. */
int pecs_probe_missing(const struct pecs_impl *impl, const struct pecs_host_facts *facts,
		       char *line, size_t len);

/* ---- running one case ---- */

struct pecs_result {
	const struct pecs_case *c;
	enum pecs_status raw;    /* what running the case gave, after the feature rules */
	enum pecs_status status; /* after the expectations file */
	char message[1024];
	char file[160]; /* where the case gave its verdict, from the top of pecs' tree; "" */
	int line;
	const char *expect_file; /* the expectations line that matched, if any */
	int expect_line;
	const char *expect_reason;
	double ms;
	struct pecs_call_tally calls[PECS_ENTRY_COUNT]; /* what the entry points answered */
};

struct pecs_run_opts {
	size_t size;
	int isolate;        /* run each case in a child process: a crash becomes CRASH */
	unsigned timeout_s; /* with isolate: a case running longer becomes CRASH */
};

/* Runs c against impl and fills r->raw and r->message. Never aborts. With isolate, the
 * whole life of the case (setup, body, deferred cleanups, teardown, the child's exit) has
 * timeout_s; past it the child is SIGKILLed and waited for a few seconds more at most, and
 * the verdict is CRASH with a message starting "TIMEOUT:". */
void pecs_run_case(const struct pecs_impl *impl, const struct pecs_host_facts *facts,
		   const struct pecs_case *c, const struct pecs_run_opts *opts,
		   struct pecs_result *r);

/* file (a __FILE__) as a path from the top of pecs' tree into out: a build from another
 * workspace compiles pecs' files as external/<name>/..., and "./" may lead. NULL gives "". */
void pecs_source_path(const char *file, char *out, size_t len);

/* Waits up to within_ms for the child pid to exit: 1 when reaped (*status set), 0 when it
 * has not exited yet, -errno when it cannot be waited for. */
int pecs_child_reap(pid_t pid, int *status, double within_ms);

/* ---- expectations ---- */

struct pecs_expect_line {
	char *pattern; /* case id or glob */
	char *reason;
	char *conds;   /* its conditions, sorted and comma-joined: duplicates compare it */
	int lineno;
	int active;    /* its conditions hold on this host */
	int known;     /* the pattern matches at least one registered case */
};

struct pecs_expectations {
	char *path;
	struct pecs_expect_line *lines;
	size_t count;
	char **errors; /* "file:line: why", one per bad line; those lines are left out */
	size_t nerrors;
	/* Lines that gate the run as a whole (directives.c); a *_line of 0: absent. */
	long floor;
	int floor_line;
	char *features; /* canonical: sorted, comma-joined */
	int features_line;
	int accept_refusal_line;
	/* @root-cause ENTRY ERRNO: a failure no line lists is XFAIL when its own tally has
	 * ENTRY answering ERRNO (pecs_call_failed_with); one line at most per entry point. */
	struct pecs_expect_cause {
		int entry, err, lineno;
		char *reason;
	} causes[PECS_ENTRY_COUNT];
	size_t ncauses;
};

/* A line starting with '@' of e's file, parsed into e; -EINVAL with why in err. */
int pecs_directive_parse(struct pecs_expectations *e, char *text, int lineno, char *err,
			 size_t errlen);
/* The features of list and csv together, sorted, unique and comma-joined (malloc'd). */
char *pecs_features_canonical(const char *const *list, const char *csv);

/* Loads path (NULL or "" gives an empty file). Conditions are evaluated against facts.
 * Returns 0; -EINVAL with the first "file:line: why" in err when a line is bad, having kept
 * the good lines and every message in e->errors (the run goes on, its gate fails); or
 * -errno when the file cannot be read. A line repeating an earlier one's pattern and
 * conditions is bad, and its message names both lines. */
int pecs_expect_load(struct pecs_expectations *e, const char *path,
		     const struct pecs_host_facts *facts, char *err, size_t errlen);
void pecs_expect_free(struct pecs_expectations *e);
/* Applies the expectations to r->raw, setting r->status and the expect_* fields. */
void pecs_expect_apply(const struct pecs_expectations *e, struct pecs_result *r);
/* Number of lines that match no registered case (printed to out with how to fix). */
size_t pecs_expect_stale(const struct pecs_expectations *e, FILE *out);
/* A line of an expectations file matching id, or NULL. */
const struct pecs_expect_line *pecs_expect_match(const struct pecs_expectations *e,
						  const char *id);

/* ---- selection ---- */

/* Whether id passes the filter: comma-separated globs, a leading '-' excludes.
 * NULL or "" selects everything. */
int pecs_filter_match(const char *filter, const char *id);

/* ---- results ---- */

struct pecs_counts {
	size_t n[PECS_STATUS_COUNT];
	size_t stale;
	size_t bad_lines; /* of the expectations file */
	size_t gate_problems; /* the run as a whole: floor, features, refusal */
};

void pecs_counts_add(struct pecs_counts *c, const struct pecs_result *r);
/* A run passes when nothing is FAIL, XPASS, BROKEN or CRASH and no expectations line is
 * stale or bad. */
int pecs_counts_ok(const struct pecs_counts *c);
/* "N passed, N failed, N xfail, N xpass, N unsupported, N env-skipped, N broken, N crashed" */
void pecs_counts_line(const struct pecs_counts *c, char *buf, size_t len);

struct pecs_report {
	const struct pecs_impl *impl;
	const struct pecs_host_facts *facts;
	const struct pecs_expectations *expectations;
	const struct pecs_result *results;
	size_t count;
	size_t planned; /* the cases selected: more than count while the run goes on */
	const struct pecs_counts *counts;
	int shard_index, shard_total;
	const char *version;    /* pecs_suite_version of the runner */
	const char *root_cause; /* pecs_root_cause's line, or "" */
	const struct pecs_call_tally *calls; /* the run's, PECS_ENTRY_COUNT of them */
	const char *refusal;             /* the implementation's own refusal, or "" */
	const struct pecs_fact_sources *sources; /* NULL: not known */
	const char (*problems)[512];     /* the gate's problems of the run as a whole */
	size_t nproblems;
};

int pecs_write_json(const struct pecs_report *rep, const char *path);
int pecs_write_junit(const struct pecs_report *rep, const char *path);
/* TAP version 13 (kselftest's dialect); path "-" is stdout. */
int pecs_write_tap(const struct pecs_report *rep, const char *path);
int pecs_write_tap_to(const struct pecs_report *rep, FILE *f);
/* The pieces, for a run that writes TAP as it goes: the version line and the plan; one
 * case as test n; the closing tests the plan counted (PECS_TAP_* bits: the expectations
 * file's stale and bad lines, the gate of the run as a whole), ok or not ok, from test n+1
 * on, then the summary comment. */
#define PECS_TAP_STALE 1u
#define PECS_TAP_BAD_LINES 2u
#define PECS_TAP_GATE 4u
void pecs_tap_head(FILE *f, const char *version, const char *impl, size_t plan);
void pecs_tap_case(FILE *f, size_t n, const struct pecs_result *r);
void pecs_tap_tail(FILE *f, size_t n, unsigned closing, const struct pecs_report *rep);
/* The closing tests that fail in rep, as PECS_TAP_* bits; how many tests bits names. */
unsigned pecs_tap_closing_failed(const struct pecs_report *rep);
size_t pecs_tap_closing_count(unsigned closing);

/* ---- the run as Bazel and the standalone binary both drive it ---- */

struct pecs_session {
	const struct pecs_impl *impl;
	struct pecs_host_facts facts;
	struct pecs_expectations expect;
	const struct pecs_case **selected;
	size_t nselected;
	int shard_index, shard_total;
	const char *version;
	char root_cause[640];
	struct pecs_call_tally calls[PECS_ENTRY_COUNT]; /* summed over the results */
	int filtered;      /* a filter chose the cases: the floor cannot be judged */
	struct pecs_fact_sources sources;
	const char *kernel_override; /* --kernel: the release the system under test implements */
	/* facts.unavailable when the host facts allow the call: the implementation refused */
	char refusal[200];
#define PECS_MAX_GATE_PROBLEMS 4
	char problems[PECS_MAX_GATE_PROBLEMS][512];
	size_t nproblems;
	/* pecs_session_stream: TAP written as each case ends, the JSON rewritten after it. */
	FILE *tap;
	int tap_owned;         /* a file opened here, not stdout */
	unsigned tap_closing;  /* the PECS_TAP_* tests its plan counted */
	const char *json_progress;
};

/* The expectations file's directives against the run: fills s->problems. */
void pecs_gate_directives(struct pecs_session *s, const struct pecs_counts *c,
			  const struct pecs_result *results, size_t n);

/* Where pecs_session_finish writes; NULL or "" skips one. tap "-" is stdout, and then
 * the summary line is a TAP comment. */
struct pecs_outputs {
	const char *json, *junit, *tap;
};

/* Checks the vtable, reads the host facts, loads expectations and selects the cases of this
 * shard that pass the filter. Returns 0 or -errno with a message printed to stderr. */
int pecs_session_init(struct pecs_session *s, const struct pecs_impl *impl,
		      const char *expectations_path, const char *filter);
void pecs_session_free(struct pecs_session *s);
/* Writes JSON/JUnit where asked (NULL: skip), prints the summary line, touches the shard
 * status file; returns the process exit status (0 when the run passes). */
int pecs_session_finish(struct pecs_session *s, struct pecs_result *results, size_t n,
			const struct pecs_outputs *out);
/* The report of results[0..n) of planned cases (n < planned: a run going on), with its
 * counts, root cause and gate problems; rep points into s, results and counts. */
void pecs_session_report(struct pecs_session *s, const struct pecs_result *results, size_t n,
			 size_t planned, struct pecs_counts *counts, struct pecs_report *rep);
/* Writes as the run goes (stream.c), so that a run that dies mid-way leaves the cases
 * already done: the TAP version line and plan now (out->tap, "-" is stdout), each case's
 * TAP line as pecs_session_case_done gives it, and out->json rewritten whole after each
 * case (a complete file naming how many cases it lacks). -errno when the TAP file cannot
 * be opened. pecs_session_finish then closes the TAP stream and writes the final JSON. */
int pecs_session_stream(struct pecs_session *s, const struct pecs_outputs *out);
void pecs_session_case_done(struct pecs_session *s, const struct pecs_result *results,
			    size_t done);
/* The TAP stream's closing tests and summary, and the file closed; -EIO on a write error. */
int pecs_session_stream_end(struct pecs_session *s, const struct pecs_report *rep);
/* Fills s->root_cause from the results' tallies; returns how many entry points it names. */
int pecs_session_root_cause(struct pecs_session *s, const struct pecs_result *results,
			    size_t n);
/* 0 when path can be written (checked before the first case: a typo must not cost a whole
 * run), else -errno. Leaves no file behind that was not there. */
int pecs_output_check(const char *path);

#endif /* PECS_RUNNER_H */
