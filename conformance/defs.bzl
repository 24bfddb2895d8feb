"""pecs_conformance_suite: the same cases, once per adapter."""

def pecs_conformance_suite(name, adapter, expectations, tags = [], **kwargs):
    pass
