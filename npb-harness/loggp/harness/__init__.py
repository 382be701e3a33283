"""loggp npb-harness part."""
