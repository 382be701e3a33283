"""loggp.knobs.params.LogGP: the one LogGP parameter set (ns, ns/B)."""
import pytest

from loggp.knobs import KnobError
from loggp.knobs.params import LogGP, format_value


def test_o_moves_both_overheads_and_a_named_overhead_wins():
    assert LogGP.of({"o": 1000.0}) == LogGP(o_s=1000.0, o_r=1000.0)
    assert LogGP.of({"o_s": 5.0, "o": 1000.0}) == LogGP(o_s=5.0, o_r=1000.0)
    assert LogGP(L=1.0).plus(o=2.0, L=3.0) == LogGP(o_s=2.0, o_r=2.0, L=4.0)
    assert LogGP().plus({"G": 0.5}) == LogGP(G=0.5)


def test_an_unknown_knob_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown knob 'os'"):
        LogGP().plus(os=1.0)


def test_parse_reads_units_with_the_one_knob_parser():
    assert LogGP.parse({"o": "1us", "o_r": "250ns", "G": "2us/KiB", "L": "2ms"}) == \
        LogGP(o_s=1000.0, o_r=250.0, G=pytest.approx(2000 / 1024, abs=1e-3), L=2e6)
    with pytest.raises(KnobError, match="'5'"):
        LogGP.parse({"L": "5"})


def test_one_way_is_o_s_plus_k_minus_one_G_plus_L_plus_o_r():
    p = LogGP(o_s=1.0, o_r=2.0, G=0.5, L=10.0)
    assert p.one_way(1) == 13.0 and p.one_way(9) == 17.0 and p.byte_time(0) == 0.0


def test_a_set_reads_as_a_user_writes_it():
    assert str(LogGP(o_s=1000.0, o_r=250.0, G=0.5, L=1.5e6)) == "o_s=1us o_r=250ns g=0 G=0.5ns/B L=1.5ms"
    assert format_value("G", 2000.0) == "2us/B" and format_value("o", 3e9) == "3s"
    assert LogGP().is_zero() and not LogGP(g=1.0).is_zero()
    # what it prints parses back to the same set
    p = LogGP(o_s=1500.0, g=20.0, G=0.25, L=3e6)
    assert LogGP.parse({k: p.text(k) for k in p.values()}) == p
