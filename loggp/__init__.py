"""loggp: LogGP network emulation testbed for MPI."""
__version__ = "0.1.0"
