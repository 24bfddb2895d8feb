"""pecs_pytest: a py_test that runs pytest on some of harness/tests under the registered
Python toolchain (Debian's /usr/bin/python3, see harness/python/BUILD.bazel)."""

def pecs_pytest(name, tests, data = [], **kwargs):
    native.py_test(
        name = name,
        srcs = ["tests/bazel_pytest.py"],
        main = "tests/bazel_pytest.py",
        args = ["harness/" + t for t in tests],
        data = tests + data,
        python_version = "PY3",
        srcs_version = "PY3",
        **kwargs
    )
