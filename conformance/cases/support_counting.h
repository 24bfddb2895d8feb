/* Deprecated: the toolkit moved to conformance/toolkit (issue 11). Include
 * "pecs/toolkit/counting.h"; this forward goes once the last case stops using it. */
#include "pecs/toolkit/counting.h"
