"""One module per vector area; each has AREA, PATH (under vectors/) and build()."""
