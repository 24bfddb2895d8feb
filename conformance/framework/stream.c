/* Writing as the run goes: a runner killed mid-way (an emulator that dies, a case that
 * takes the process down, a CI timeout) still leaves the TAP lines and the JSON results of
 * the cases it finished. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

/* The closing tests that can fail, known before the first case: the expectations file's
 * stale and bad lines, and a gate of the run as a whole when a directive or a refusal can
 * fail it. The plan counts them, so each is written at the end, ok or not. */
static unsigned closing_planned(const struct pecs_session *s)
{
	const struct pecs_expectations *e = &s->expect;
	unsigned bits = 0;
	if (s->shard_index == 0 && pecs_expect_stale(e, NULL))
		bits |= PECS_TAP_STALE;
	if (e->nerrors)
		bits |= PECS_TAP_BAD_LINES;
	if ((e->floor_line && s->shard_total == 1 && !s->filtered) || e->features_line ||
	    (s->refusal[0] && !e->accept_refusal_line))
		bits |= PECS_TAP_GATE;
	return bits;
}

int pecs_session_stream(struct pecs_session *s, const struct pecs_outputs *out)
{
	s->json_progress = out && out->json && *out->json ? out->json : NULL;
	if (!out || !out->tap || !*out->tap)
		return 0;
	if (strcmp(out->tap, "-") == 0) {
		s->tap = stdout;
		s->tap_owned = 0;
	} else if (!(s->tap = fopen(out->tap, "w"))) {
		return -errno;
	} else {
		s->tap_owned = 1;
	}
	s->tap_closing = closing_planned(s);
	pecs_tap_head(s->tap, s->version, s->impl->name,
		      s->nselected + pecs_tap_closing_count(s->tap_closing));
	fflush(s->tap);
	return 0;
}

/* The whole file under another name, then renamed over path: whoever reads it, and
 * whenever the run dies, finds a complete file. */
static void write_json_progress(const struct pecs_report *rep, const char *path)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.partial", path) >= (int)sizeof(tmp))
		return;
	if (pecs_write_json(rep, tmp) == 0)
		rename(tmp, path);
	else
		remove(tmp);
}

void pecs_session_case_done(struct pecs_session *s, const struct pecs_result *results,
			    size_t done)
{
	if (s->tap) {
		pecs_tap_case(s->tap, done, &results[done - 1]);
		fflush(s->tap);
	}
	if (s->json_progress && done < s->nselected) {
		struct pecs_counts counts;
		struct pecs_report rep;
		pecs_session_report(s, results, done, s->nselected, &counts, &rep);
		write_json_progress(&rep, s->json_progress);
	}
}

int pecs_session_stream_end(struct pecs_session *s, const struct pecs_report *rep)
{
	/* A closing test that fails though the plan did not count it (it cannot, today)
	 * still fails the stream: TAP consumers see the plan broken. */
	unsigned closing = s->tap_closing | pecs_tap_closing_failed(rep);
	pecs_tap_tail(s->tap, rep->count, closing, rep);
	int rc = ferror(s->tap) ? -EIO : 0;
	if (s->tap_owned) {
		if (fclose(s->tap) != 0 && rc == 0)
			rc = -errno;
	} else {
		fflush(s->tap);
	}
	s->tap = NULL;
	return rc;
}
