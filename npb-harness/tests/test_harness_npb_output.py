"""The NPB report parser on sample texts written in NPB's format."""
from loggp.harness import npb_output

# Our kernels: the NPB block with microsecond times.
OURS = """
 NAS Parallel Benchmarks (loggp) - CG Benchmark

 CG Benchmark Completed.
 Class           =                        S
 Size            =                     1400
 Iterations      =                       15
 Time in seconds =                 0.012345
 Total processes =                        2
 Mop/s total     =                  4321.00
 Mop/s/process   =                  2160.50
 Operation type  =           floating point
 Verification    =               SUCCESSFUL
 Version         =                      3.4
"""

# NASA's binaries: banner, iteration log, two-decimal time, 3D size, compile info.
NASA_FT_FAILED = """

 NAS Parallel Benchmarks 3.4 -- FT Benchmark

 No input file inputft.data. Using compiled defaults
 Size                : 256x 256x 128
 Iterations          :              6
 Number of processes :              4
 T =    1     Checksum =    5.046735008193D+02    5.114047905510D+02
 Result verification failed
 class = A


 FT Benchmark Completed.
 Class           =                        A
 Size            =            256x 256x 128
 Iterations      =                        6
 Time in seconds =                     3.58
 Total processes =                        4
 Active processes=                        4
 Mop/s total     =                  1993.22
 Mop/s/process   =                   498.31
 Operation type  =           floating point
 Verification    =             UNSUCCESSFUL
 Version         =                    3.4.2
 Compile date    =              01 Jan 2024
"""


def test_our_kernel_report():
    r = npb_output.parse_npb(OURS)
    assert r.time_seconds == 0.012345
    assert r.verified is True
    assert r.klass == "S"
    assert r.mops_total == 4321.0
    assert r.fields["Total processes"] == "2"
    assert r.fields["Iterations"] == "15"


def test_nasa_report_unsuccessful():
    r = npb_output.parse_npb(NASA_FT_FAILED)
    assert r.time_seconds == 3.58
    assert r.verified is False
    assert r.klass == "A"
    # The banner's "Size :" line is not the report's "Size =" line.
    assert r.fields["Size"] == "256x 256x 128"


def test_crashed_run_has_nothing():
    r = npb_output.parse_npb(" NAS Parallel Benchmarks 3.4 -- CG Benchmark\nSegmentation fault\n")
    assert r.time_seconds is None and r.verified is None and r.klass is None


def test_garbled_time_is_none_not_an_exception():
    r = npb_output.parse_npb(" Time in seconds =   ********\n Verification    =   SUCCESSFUL\n")
    assert r.time_seconds is None
    assert r.verified is True


def test_custom_command_regexes():
    text = "iterations done\nelapsed: 2.5e-3 s\nresult OK\n"
    r = npb_output.parse_custom(text, r"elapsed: (\S+) s", r"^result OK$")
    assert r.time_seconds == 2.5e-3 and r.verified is True
    r = npb_output.parse_custom(text, r"elapsed: (\S+) s", r"^result FAIL$")
    assert r.verified is False
    r = npb_output.parse_custom(text, r"took (\S+)", None)
    assert r.time_seconds is None and r.verified is None
