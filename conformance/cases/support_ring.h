/* Deprecated: the toolkit moved to conformance/toolkit (issue 11). Include
 * "pecs/toolkit/ring.h"; this forward goes once the last case stops using it. */
#include "pecs/toolkit/ring.h"
