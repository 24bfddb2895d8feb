#include "pecs/toolkit/version.h"

#include <ctype.h>
#include <stdlib.h>

#include "pecs/case.h"

int pecs_linux_version_of(const char *release)
{
	char *end;
	long major, minor;

	if (!isdigit((unsigned char)release[0]))
		return 0;
	major = strtol(release, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return 0;
	minor = strtol(end + 1, &end, 10);
	if (major < 2 || major > 99 || minor > 999)
		return 0;
	return (int)(major * 1000 + minor);
}

int pecs_linux_before(struct pecs_t *t, int major, int minor)
{
	int v = pecs_linux_version_of(pecs_host(t)->kernel_release);

	return v != 0 && v < major * 1000 + minor;
}

int pecs_linux_point_of(const char *release)
{
	char *end;
	long point;

	if (!pecs_linux_version_of(release))
		return -1;
	strtol(release, &end, 10);     /* X */
	strtol(end + 1, &end, 10);     /* .Y */
	/* X.Y then something other than .Z: the point release is 0 */
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return 0;
	point = strtol(end + 1, &end, 10);
	return point > 99999 ? 0 : (int)point;
}
