/* The same implementation linked into the suite's own binary (pecs_conformance_suite)
 * instead of loaded as a plugin: the runners call pecs_adapter(). */
#include "pecs/impl.h"

const struct pecs_impl *pecs_plugin_impl(void);

const struct pecs_impl *pecs_adapter(void)
{
	return pecs_plugin_impl();
}
