/* Deprecated: the toolkit moved to conformance/toolkit (issue 11). Include
 * "pecs/toolkit/host.h"; this forward goes once the last case stops using it. */
#include "pecs/toolkit/host.h"
