"""pecs_dependencies(): what a workspace that uses pecs needs, offline.

In the other workspace's WORKSPACE (docs/implementing.md, "From your own Bazel workspace"):

    local_repository(name = "pecs", path = "/path/to/pecs")
    load("@pecs//:deps.bzl", "pecs_dependencies")
    pecs_dependencies()

It declares the three repositories Bazel 4 wants even for plain C builds (rules_cc,
rules_java, remote_coverage_tools) as pecs's own local stand-ins (third_party/bazel/), and
registers the Python toolchain pecs's Python tools run under (Debian's /usr/bin/python3).
A repository the caller declared before the call is left as the caller declared it.
"""

# The stand-ins live inside pecs's tree, whose path only a repository rule can know: it is
# not the caller's to repeat, and local_repository takes a path, not a label.
def _standin_impl(rctx):
    pecs_root = rctx.path(rctx.attr._marker).dirname
    src = pecs_root.get_child("third_party").get_child("bazel").get_child(rctx.attr.dir)
    for child in src.readdir():
        rctx.symlink(child, child.basename)

_pecs_standin = repository_rule(
    implementation = _standin_impl,
    attrs = {
        "dir": attr.string(mandatory = True),
        "_marker": attr.label(default = Label("//:deps.bzl")),
    },
    local = True,
)

_STANDINS = ["rules_cc", "rules_java", "remote_coverage_tools"]

def pecs_dependencies():
    existing = native.existing_rules()
    for name in _STANDINS:
        if name not in existing:
            _pecs_standin(name = name, dir = name)
    native.register_toolchains(str(Label("//harness/python:debian_python3_toolchain")))
