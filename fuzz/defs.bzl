"""One libFuzzer target: its seed bundle (from the vectors), and a cc_test that is the
fuzzer under --config=fuzz and a replay of the seeds under any other config."""

def pecs_fuzz_target(name, srcs, deps, seed_vectors = ["//vectors:json"]):
    seeds = name + "_seeds"
    native.genrule(
        name = seeds,
        srcs = seed_vectors,
        outs = [name + ".seeds"],
        cmd = "/usr/bin/python3 $(location :make_seeds.py) %s --bundle $@ $(SRCS)" % name,
        tools = [":make_seeds.py"],
    )
    native.cc_test(
        name = name + "_fuzz",
        size = "small",
        srcs = srcs + select({
            ":libfuzzer": [],
            "//conditions:default": [":replay_main.c"],
        }),
        # libFuzzer brings main(); --config=fuzz has built everything for it already.
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        args = ["$(location :%s)" % seeds],
        data = [":" + seeds],
        deps = deps,
    )
