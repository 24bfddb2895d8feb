/* Which Linux an implementation answers as, for the behaviours Linux changed.
 *
 * A case expects the behaviour of the kernel it runs on. Where it cannot probe for the
 * feature it reads the release the implementation states in its host facts
 * (kernel_release: uname's from inside a guest, never the host's; for a Debian kernel the
 * stable release its uname -v names, "6.1.176" rather than "6.1.0-50-cloud-amd64").
 * A release that does not start with a Linux version ("ref on 6.18.4", a snapshot's own
 * name) follows the newest behaviour the suite knows.
 */
#ifndef PECS_TOOLKIT_VERSION_H
#define PECS_TOOLKIT_VERSION_H

struct pecs_t;

/* major * 1000 + minor from a release string, or 0 when it names no Linux version. */
int pecs_linux_version_of(const char *release);

/* Nonzero when the implementation states a Linux release older than major.minor. */
int pecs_linux_before(struct pecs_t *t, int major, int minor);

/* The point release of a Linux release string ("6.1.176" gives 176, as the runner states a
 * Debian kernel's from uname -v; "6.1.0-50-cloud-amd64" 0), or -1 when it names no Linux
 * version: for a case whose answer a stable release changed. */
int pecs_linux_point_of(const char *release);

#endif /* PECS_TOOLKIT_VERSION_H */
