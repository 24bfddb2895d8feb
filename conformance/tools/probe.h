/* One probe: a single perf_event_open(2) interaction, written as one text line of
 * key=value words, run through an implementation's vtable, and its observable result.
 *
 *   op=open type=1 config=1 size=4097
 *   op=read read_format=0x1f members=2
 *   op=ioctl sampling=1 request=0x40082404 arg=0 argkind=ptr
 *   op=mmap sampling=1 pages=3 prot=rw
 *
 * The line is the replayable part of a captured vector, so the same text that recorded a
 * result on one kernel re-runs it on another (the harness's crosscheck). */
#ifndef PECS_CAPTURE_PROBE_H
#define PECS_CAPTURE_PROBE_H

#include <stdint.h>
#include <stdio.h>

#include "pecs/impl.h"

/* Runs one probe line against impl and prints its result as one JSON object on one line:
 *   {"ret": "fd" | "-EINVAL" | "24" | "0", ...op-specific keys}
 * Kernel-chosen values (event ids) are zeroed in "bytes" and named in "dynamic".
 * Returns 0, or -EINVAL with a message in err when the line cannot be parsed. */
int pecs_probe_run(const struct pecs_impl *impl, const char *line, FILE *out, char *err,
		   size_t errlen);

#endif /* PECS_CAPTURE_PROBE_H */
