"""pecs_conformance_suite: the same cases, once per adapter.

For an adapter library `adapter` it makes:
  <name>         cc_test: cmocka drives every case, gated by `expectations`
  pecs-<name>    cc_binary: the standalone runner (list, filter, JSON/JUnit, --isolate)
and, with static = True, pecs-<name>-static: one fully static binary with the vectors
compiled in, to copy into another system.
"""

def pecs_conformance_suite(name, adapter, expectations, static = False, tags = [], size = "medium", **kwargs):
    cases = "//conformance:cases"
    native.cc_test(
        name = name,
        deps = ["//conformance:main_cmocka", cases, adapter],
        args = ["--expectations=$(location %s)" % expectations],
        data = [expectations],
        tags = tags,
        size = size,
        **kwargs
    )
    native.cc_binary(
        name = "pecs-" + name,
        deps = ["//conformance:main_standalone", cases, adapter],
        tags = tags,
    )
    if static:
        native.cc_binary(
            name = "pecs-%s-static" % name,
            deps = ["//conformance:main_standalone", cases, adapter],
            linkstatic = True,
            linkopts = ["-static"],
            features = ["fully_static_link"],
            tags = tags,
        )
