"""pecs_conformance_suite: the same cases, once per adapter.

For an adapter library `adapter` it makes:
  <name>               cc_test: cmocka drives every case, gated by `expectations`
  pecs-<name>          cc_binary: the standalone runner (list, filter, JSON/JUnit, --isolate)
  pecs-<name>-static   with static = True: one fully static binary, vectors compiled in,
                       to copy into another system
  <name>_unprivileged  with unprivileged = True: the standalone runner as uid 65534 with
                       no capabilities (needs root to drop privilege; runs unsandboxed)

pecs_plugin_test: a plugin (a shared object exporting pecs_plugin_impl()) under the plugin
runner, gated by its expectations file.

Both work loaded as @pecs//conformance:defs.bzl from another workspace: every label of
pecs's own is a Label() here, so it resolves in pecs's repository, not the caller's.
"""

_CASES = Label("//conformance:cases")
_MAIN_CMOCKA = Label("//conformance:main_cmocka")
_MAIN_STANDALONE = Label("//conformance:main_standalone")
_RUN_UNPRIVILEGED = Label("//conformance:run_unprivileged.sh")
_PLUGIN_RUNNER = Label("//conformance/adapters/plugin:pecs-plugin")
_RUN_PLUGIN_SUITE = Label("//conformance/adapters/plugin:run_plugin_suite.sh")

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
    cases = _CASES
    native.cc_test(
        name = name,
        deps = [_MAIN_CMOCKA, cases, adapter],
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
        deps = [_MAIN_STANDALONE, cases, adapter],
        tags = tags,
        # The runners are what people (and the harness) run: public, unlike the tests.
        visibility = ["//visibility:public"],
    )
    if static:
        native.cc_binary(
            name = "pecs-%s-static" % name,
            deps = [_MAIN_STANDALONE, cases, adapter],
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
            srcs = [_RUN_UNPRIVILEGED],
            args = [
                "$(location %s)" % runner,
                "$(location %s)" % expectations,
            ] + runner_args,
            data = [runner, expectations],
            # Dropping to uid 65534 needs the real root, not the sandbox's user namespace.
            tags = tags + ["no-sandbox"],
            size = size,
        )

def pecs_plugin_test(
        name,
        plugin,
        expectations,
        runner_args = [],
        tags = [],
        size = "medium",
        **kwargs):
    """The plugin runner on `plugin` (a cc_binary with linkshared = True), each case in its
    own process, gated by `expectations`: an unlisted failure, an XPASS, a stale line or a
    gate line (@features, @floor) that does not hold fails the test. The runner's results
    land in the test's undeclared outputs (results.json).

    Add "no-sandbox" to `tags` when the plugin reaches the host's perf_event_open: inside
    Bazel's sandbox (a user namespace) root's capabilities do not count for it.
    """
    native.sh_test(
        name = name,
        srcs = [_RUN_PLUGIN_SUITE],
        args = [
            "$(location %s)" % _PLUGIN_RUNNER,
            "$(location %s)" % plugin,
            "$(location %s)" % expectations,
        ] + runner_args,
        data = [_PLUGIN_RUNNER, plugin, expectations],
        tags = tags,
        size = size,
        **kwargs
    )
