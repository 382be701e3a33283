"""The knob vocabulary is defined once (loggp.knobs.vocabulary); the C table in
knobs.c and the enum in knobs.h must say the same, in the same order."""
import re
from pathlib import Path

from loggp.knobs import vocabulary

CORE = Path(__file__).resolve().parents[1] / "core"


def c_enum():
    header = (CORE / "knobs.h").read_text()
    body = re.search(r"typedef enum \{(.*?)\} loggp_knob_id;", header, re.S).group(1)
    return re.findall(r"^\s*(LOGGP_KNOB_\w+)", body, re.M)


def c_table():
    source = (CORE / "knobs.c").read_text()
    body = re.search(r"loggp_knob_table\[LOGGP_KNOB_COUNT\] = \{(.*?)\n\};", source, re.S).group(1)
    row = re.compile(r'\[(\w+)\]\s*=\s*\{"([^"]*)",\s*"([^"]*)",\s*"([^"]*)",\s*(\d),\s*"([^"]*)"\}', re.S)
    return row.findall(body)


def test_the_c_enum_lists_the_knobs_in_the_vocabulary_order():
    assert c_enum() == [k.c_enum for k in vocabulary.VOCABULARY] + ["LOGGP_KNOB_COUNT"]


def test_the_c_table_says_what_the_vocabulary_says():
    rows = c_table()
    assert len(rows) == len(vocabulary.VOCABULARY)
    for (enum, name, flag, variable, per_byte, meaning), knob in zip(rows, vocabulary.VOCABULARY):
        assert (enum, name, flag, variable, per_byte == "1", meaning) == \
            (knob.c_enum, knob.name, knob.flag, knob.variable, knob.per_byte, knob.meaning)


def test_a_changed_c_row_would_be_seen():
    """The parser of the C table reads every field: a row with another flag differs."""
    text = (CORE / "knobs.c").read_text().replace('{"o_s", "os",', '{"o_s", "o_s",')
    row = re.search(r'\[LOGGP_KNOB_O_S\]\s*=\s*\{"([^"]*)",\s*"([^"]*)"', text)
    assert row.group(2) != vocabulary.BY_NAME["o_s"].flag


def test_the_profile_writes_the_json_name_of_G():
    profile = (CORE.parents[1] / "shim" / "src" / "profile.c").read_text()
    assert f'"{vocabulary.BY_NAME["G"].json}"' in profile


def test_every_setting_has_one_flag_and_names_its_knobs():
    assert vocabulary.SETTINGS == ("o", "o_s", "o_r", "g", "G", "L")
    assert vocabulary.FLAGS == {"o": "--o", "o_s": "--os", "o_r": "--or", "g": "--g", "G": "--G", "L": "--L"}
    assert vocabulary.knobs_of("o") == ("o_s", "o_r") and vocabulary.knobs_of("g") == ("g",)
    assert vocabulary.setting_name("o_s") == ("o_s", None)
    assert vocabulary.setting_name("os") == ("o_s", "os")
    assert vocabulary.unit_of("G") == vocabulary.TIME_PER_BYTE and vocabulary.unit_of("o") == vocabulary.TIME


def test_the_armed_steps_are_the_c_sides():
    """LOGGP_OUTSIDE=armed (C) and the armed baselines of calibrate, bench and studies (Python)
    must arm the same steps."""
    header = (CORE / "runenv.h").read_text()
    ps = dict(re.findall(r"#define (LOGGP_ARMED_STEP_PS\w*) INT64_C\((\d+)\)", header))
    assert float(ps["LOGGP_ARMED_STEP_PS"]) / 1000 == vocabulary.ARMED_STEP_NS[vocabulary.TIME]
    assert float(ps["LOGGP_ARMED_STEP_PS_PER_BYTE"]) / 1000 == vocabulary.ARMED_STEP_NS[vocabulary.TIME_PER_BYTE]
    assert vocabulary.ARMED == {"o_s": "1ns", "o_r": "1ns", "g": "1ns", "G": "0.001ns/B", "L": "1ns"}
