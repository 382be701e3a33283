"""loggp analysis part."""
