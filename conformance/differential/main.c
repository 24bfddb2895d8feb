/* pecs-diff: the kernel against an implementation on seeded random call sequences.
 *
 *   pecs-diff --sequences N --seed S [--impl ref|syscall|plugin:PATH]
 *             [--known docs/behaviours.md] [--json FILE] [--text FILE] [--identity NAME]
 *             [--first I] [--timeout S] [--show]
 *
 * --show prints the sequences the options select, without running them (a sequence
 * the run named as hanging, for example).
 *
 * Exit status: 0 when every class of difference is in the known list, 1 when one is not,
 * 2 for usage and setup errors, 3 when a sequence gave no answer in S seconds (it is
 * named on stderr; the run stops there). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance/differential/diff.h"

/* The suite's two in-tree adapters, built under names of their own (BUILD.bazel). */
const struct pecs_impl *pecs_adapter_syscall(void);
const struct pecs_impl *pecs_adapter_ref(void);

#define MAX_KNOWN 256

static const struct pecs_impl *load_plugin(const char *path)
{
	void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		fprintf(stderr, "pecs-diff: cannot load %s: %s\n", path, dlerror());
		return NULL;
	}
	const struct pecs_impl *(*entry)(void);
	*(void **)&entry = dlsym(so, "pecs_plugin_impl");
	if (!entry) {
		fprintf(stderr, "pecs-diff: %s does not export pecs_plugin_impl()\n", path);
		return NULL;
	}
	const struct pecs_impl *impl = entry();
	char msg[256];
	if (pecs_impl_check(impl, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "pecs-diff: refusing %s: %s\n", path, msg);
		return NULL;
	}
	return impl;
}

static const struct pecs_impl *choose(const char *spec)
{
	if (strcmp(spec, "ref") == 0)
		return pecs_adapter_ref();
	if (strcmp(spec, "syscall") == 0)
		return pecs_adapter_syscall();
	if (strncmp(spec, "plugin:", 7) == 0)
		return load_plugin(spec + 7);
	fprintf(stderr, "pecs-diff: --impl is ref, syscall or plugin:PATH, not %s\n", spec);
	return NULL;
}

static void show_sequences(const struct diff_options *o)
{
	for (uint64_t i = o->first; i < o->first + o->sequences; i++) {
		struct diff_seq s;
		diff_gen(&s, diff_seq_seed(o->seed, i));
		printf("sequence %" PRIu64 " (seed %#" PRIx64 "):\n", i, s.seed);
		for (int k = 0; k < s.n; k++) {
			printf("  ");
			diff_print_call(stdout, &s.calls[k]);
			printf("\n");
		}
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: pecs-diff --sequences N --seed S [--impl ref|syscall|"
			"plugin:PATH] [--known FILE] [--json FILE] [--text FILE] [--identity NAME]"
			 " [--minimize K] [--sample-every M] [--first I] [--timeout S] [--show]\n");
	return 2;
}

static int write_to(const char *path, const struct diff_result *r,
		    const struct diff_options *o, const struct diff_meta *m, int json)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!f) {
		fprintf(stderr, "pecs-diff: %s: %s\n", path, strerror(errno));
		return -1;
	}
	(json ? diff_report_json : diff_report_text)(f, r, o, m);
	if (f != stdout)
		fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static struct diff_known known[MAX_KNOWN];
	struct diff_options o = {.sequences = 1000, .minimize = 8, .sample_every = 256,
				 .timeout_s = 120};
	struct diff_meta m = {.oracle = "kernel", .impl = "ref", .identity = "?"};
	const char *known_path = NULL, *json = NULL, *text = "-";
	int show = 0;
	static const struct option opts[] = {
		{"sequences", 1, 0, 'n'}, {"seed", 1, 0, 's'}, {"impl", 1, 0, 'i'},
		{"known", 1, 0, 'k'}, {"json", 1, 0, 'j'}, {"text", 1, 0, 't'},
		{"identity", 1, 0, 'u'}, {"minimize", 1, 0, 'm'}, {"sample-every", 1, 0, 'e'},
		{"first", 1, 0, 'f'}, {"timeout", 1, 0, 'w'}, {"show", 0, 0, 'p'},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': o.sequences = strtoull(optarg, NULL, 0); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'i': m.impl = optarg; break;
		case 'k': known_path = optarg; break;
		case 'j': json = optarg; break;
		case 't': text = optarg; break;
		case 'u': m.identity = optarg; break;
		case 'm': o.minimize = strtoull(optarg, NULL, 0); break;
		case 'e': o.sample_every = strtoull(optarg, NULL, 0); break;
		case 'f': o.first = strtoull(optarg, NULL, 0); break;
		case 'w': o.timeout_s = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'p': show = 1; break;
		default: return usage();
		}
	}
	if (optind != argc)
		return usage();
	if (show) {
		diff_exec_init(); /* the generator needs the CPU count */
		show_sequences(&o);
		return 0;
	}
	const struct pecs_impl *impl = choose(m.impl);
	if (!impl)
		return 2;
	if (known_path) {
		o.nknown = diff_known_load(known_path, known, MAX_KNOWN);
		if (o.nknown < 0) {
			fprintf(stderr, "pecs-diff: %s: %s\n", known_path, strerror(-o.nknown));
			return 2;
		}
		o.known = known;
	}
	if (strcmp(m.identity, "?") == 0)
		m.identity = getuid() == 0 ? "root" : "unprivileged";
	diff_exec_init();
	struct diff_result r;
	int err = diff_session(pecs_adapter_syscall(), impl, &o, &r);
	if (err < 0) {
		fprintf(stderr, "pecs-diff: setup failed: %s\n", strerror(-err));
		return 2;
	}
	int rc = diff_result_new_classes(&r) ? 1 : 0;
	if ((text && write_to(text, &r, &o, &m, 0) < 0) || (json && write_to(json, &r, &o, &m, 1) < 0))
		rc = 2;
	diff_result_free(&r);
	return rc;
}
