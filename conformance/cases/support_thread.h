/* Deprecated: the toolkit moved to conformance/toolkit (issue 11). Include
 * "pecs/toolkit/thread.h"; this forward goes once the last case stops using it. */
#include "pecs/toolkit/thread.h"
