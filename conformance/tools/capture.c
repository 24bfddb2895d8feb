/* pecs-capture: records how the implementation linked in (the syscall adapter: the
 * running kernel) answers a fixed list of probes, and replays probe lines on demand.
 *
 *   pecs-capture --list      tcId<TAB>flags<TAB>comment<TAB>probe, one probe a line
 *   pecs-capture --replay    probe lines on stdin -> one JSON result a line on stdout
 *
 * The harness turns --list + --replay into the vector files in vectors/captured/ (source linux-capture)
 * and later replays those vectors' probe lines to crosscheck them against another kernel:
 * `python3 -m pecs_harness capture` and `crosscheck`. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "pecs/impl.h"
#include "probe.h"
#include "probes.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: pecs-capture --list | --replay | --uname\n"
		     "  --list    the built-in probes: tcId, flags, comment, probe line (tab-separated)\n"
		     "  --replay  run each probe line read from stdin; print its result as JSON\n"
		     "  --uname   the kernel release and machine the results come from\n");
}

static int replay(const struct pecs_impl *impl)
{
	char line[1024], err[256];
	int bad = 0;
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		err[0] = 0;
		if (pecs_probe_run(impl, line, stdout, err, sizeof(err)) < 0) {
			/* One line out per line in, so the reader can pair them up. */
			printf("{\"ret\": \"error\", \"error\": \"%s\"}\n", err);
			fflush(stdout);
			bad = 1;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	const struct pecs_impl *impl = pecs_adapter();
	char msg[256];
	if (pecs_impl_check(impl, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "pecs-capture: %s\n", msg);
		return 2;
	}
	if (strcmp(argv[1], "--list") == 0) {
		for (const struct pecs_capture_probe *p = pecs_capture_probes; p->tc_id; p++)
			printf("%d\t%s\t%s\t%s\n", p->tc_id, p->flags, p->comment, p->line);
		return 0;
	}
	if (strcmp(argv[1], "--replay") == 0)
		return replay(impl);
	if (strcmp(argv[1], "--uname") == 0) {
		struct utsname u;
		if (uname(&u) < 0)
			return 1;
		printf("%s\t%s\n", u.release, u.machine);
		return 0;
	}
	usage(strcmp(argv[1], "--help") == 0 ? stdout : stderr);
	return strcmp(argv[1], "--help") == 0 ? 0 : 2;
}
