/* The report: figures, then each class with its count, whether the known list has it,
 * and its minimized reproducer; the same as JSON (pecs-differential-1). */
#include <inttypes.h>

#include "conformance/differential/diff.h"

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 100.0;
}

static void repro_text(FILE *f, const struct diff_class *c)
{
	for (int i = 0; i < c->repro.n; i++) {
		fprintf(f, "      %s ", i == c->at ? ">" : " ");
		diff_print_call(f, &c->repro.calls[i]);
		fputc('\n', f);
	}
}

void diff_report_text(FILE *f, const struct diff_result *r, const struct diff_options *o,
		      const struct diff_meta *m)
{
	fprintf(f, "differential: %s against %s as %s, seed %" PRIu64 "\n", m->impl, m->oracle,
		m->identity, o->seed);
	fprintf(f, "  sequences %" PRIu64 ", agreeing %" PRIu64 " (%.2f%%); calls %" PRIu64
		", agreeing %" PRIu64 " (%.2f%%)\n", r->sequences, r->agreeing,
		pct(r->agreeing, r->sequences), r->calls, r->agreeing_calls,
		pct(r->agreeing_calls, r->calls));
	fprintf(f, "  %d class(es), %d not in the known list\n", r->nclasses,
		diff_result_new_classes(r));
	for (int k = 0; k < 2; k++) {
		fprintf(f, k == 0 ? "\nNEW differences (no entry in the known list):\n"
				  : "\nknown differences (docs/behaviours.md):\n");
		for (int i = 0; i < r->nclasses; i++) {
			const struct diff_class *c = &r->classes[i];
			if ((c->known != NULL) != k)
				continue;
			fprintf(f, "  %s\n    %" PRIu64 " minimized, first in sequence %" PRIu64
				" (seed %#" PRIx64 ")", c->key, c->count, c->first, c->repro.seed);
			if (c->known)
				fprintf(f, "; %s (%s)", c->known->id, c->known->owner);
			fprintf(f, "\n");
			repro_text(f, c);
		}
	}
	fprintf(f, "\nby call and answers (all differences, minimized or not):\n");
	for (int i = 0; i < r->nraws; i++)
		fprintf(f, "  %8" PRIu64 " (%" PRIu64 " minimized)  %s\n", r->raws[i].count,
			r->raws[i].minimized, r->raws[i].raw);
}

static void repro_json(FILE *f, const struct diff_class *c)
{
	fprintf(f, "[");
	for (int i = 0; i < c->repro.n; i++) {
		char line[1024];
		FILE *mem = fmemopen(line, sizeof(line), "w");
		if (!mem)
			continue;
		diff_print_call(mem, &c->repro.calls[i]);
		fclose(mem);
		line[sizeof(line) - 1] = '\0';
		fprintf(f, "%s", i ? ", " : "");
		diff_json_str(f, line);
	}
	fprintf(f, "]");
}

void diff_report_json(FILE *f, const struct diff_result *r, const struct diff_options *o,
		      const struct diff_meta *m)
{
	fprintf(f, "{\"format\": \"pecs-differential-1\", \"oracle\": ");
	diff_json_str(f, m->oracle);
	fprintf(f, ", \"impl\": ");
	diff_json_str(f, m->impl);
	fprintf(f, ", \"identity\": ");
	diff_json_str(f, m->identity);
	fprintf(f, ", \"seed\": %" PRIu64 ", \"first\": %" PRIu64 ", \"sequences\": %" PRIu64
		", \"agreeing\": %" PRIu64
		", \"calls\": %" PRIu64 ", \"agreeing_calls\": %" PRIu64 ", \"new_classes\": %d,"
		"\n \"classes\": [", o->seed, o->first, r->sequences, r->agreeing, r->calls,
		r->agreeing_calls, diff_result_new_classes(r));
	for (int i = 0; i < r->nclasses; i++) {
		const struct diff_class *c = &r->classes[i];
		fprintf(f, "%s\n  {\"key\": ", i ? "," : "");
		diff_json_str(f, c->key);
		fprintf(f, ", \"raw\": ");
		diff_json_str(f, c->raw);
		fprintf(f, ", \"count\": %" PRIu64 ", \"first_sequence\": %" PRIu64
			", \"sequence_seed\": %" PRIu64 ", \"at\": %d, \"known\": ", c->count,
			c->first, c->repro.seed, c->at);
		if (c->known) {
			diff_json_str(f, c->known->id);
			fprintf(f, ", \"owner\": ");
			diff_json_str(f, c->known->owner);
		} else {
			fprintf(f, "null, \"owner\": null");
		}
		fprintf(f, ", \"reproducer\": ");
		repro_json(f, c);
		fprintf(f, "}");
	}
	fprintf(f, "],\n \"raw\": [");
	for (int i = 0; i < r->nraws; i++) {
		fprintf(f, "%s\n  {\"raw\": ", i ? "," : "");
		diff_json_str(f, r->raws[i].raw);
		fprintf(f, ", \"count\": %" PRIu64 ", \"minimized\": %" PRIu64 "}",
			r->raws[i].count, r->raws[i].minimized);
	}
	fprintf(f, "]}\n");
}
