"""loggp.shim: the Python of the shim part: `loggp run` (libloggp.so preloaded, knobs,
routing) and `loggp bench` (figures about the apparatus)."""
