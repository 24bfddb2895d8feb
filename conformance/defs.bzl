"""pecs_conformance_suite: the same cases, once per adapter.

For an adapter library `adapter` it makes:
  <name>               cc_test: cmocka drives every case, gated by `expectations`
  pecs-<name>          cc_binary: the standalone runner (list, filter, JSON/JUnit, --isolate)
  pecs-<name>-static   with static = True: one fully static binary, vectors compiled in,
                       to copy into another system
  <name>_unprivileged  with unprivileged = True: the standalone runner as uid 65534 with
                       no capabilities (needs root to drop privilege; runs unsandboxed)
"""

def pecs_conformance_suite(
        name,
        adapter,
        expectations,
        static = False,
        unprivileged = False,
        tags = [],
        size = "medium",
        shard_count = None,
        runner_args = []):
    cases = "//conformance:cases"
    native.cc_test(
        name = name,
        deps = ["//conformance:main_cmocka", cases, adapter],
        args = ["--expectations=$(location %s)" % expectations] + runner_args,
        data = [expectations],
        # Tests link shared libraries by default, and then the pecs_cases section of the
        # cases library is not the one the framework's __start/__stop symbols see.
        linkstatic = True,
        tags = tags,
        size = size,
        shard_count = shard_count,
    )
    native.cc_binary(
        name = "pecs-" + name,
        deps = ["//conformance:main_standalone", cases, adapter],
        tags = tags,
        # The runners are what people (and the harness) run: public, unlike the tests.
        visibility = ["//visibility:public"],
    )
    if static:
        native.cc_binary(
            name = "pecs-%s-static" % name,
            deps = ["//conformance:main_standalone", cases, adapter],
            linkstatic = True,
            linkopts = ["-static"],
            features = ["fully_static_link"],
            tags = tags,
            visibility = ["//visibility:public"],
        )
    if unprivileged:
        # The static binary when there is one: it is what people copy and run unprivileged.
        runner = ":pecs-%s-static" % name if static else ":pecs-" + name
        native.sh_test(
            name = name + "_unprivileged",
            srcs = ["//conformance:run_unprivileged.sh"],
            args = [
                "$(location %s)" % runner,
                "$(location %s)" % expectations,
            ] + runner_args,
            data = [runner, expectations],
            # Dropping to uid 65534 needs the real root, not the sandbox's user namespace.
            tags = tags + ["no-sandbox"],
            size = size,
        )
