/* The built-in probe table of the capture tool. */
#ifndef PECS_CAPTURE_PROBES_H
#define PECS_CAPTURE_PROBES_H

struct pecs_capture_probe {
	int tc_id;           /* stable forever; 0 ends the table */
	const char *flags;   /* space-separated vector flags */
	const char *comment;
	const char *line;    /* the probe, see probe.h */
};

extern const struct pecs_capture_probe pecs_capture_probes[];

#endif /* PECS_CAPTURE_PROBES_H */
