"""The command base every `loggp` subcommand uses: one parser class, one path from an
error to "PROG: MESSAGE" and an exit code."""
import pytest

from loggp.knobs.command import Command, CommandError, UsageError


class Refused(Exception):
    pass


class Example(Command):
    name = "example"
    errors = ((Refused, 4),)

    def __init__(self, fail=None, check_fails=False):
        self.fail = fail
        self.check_fails = check_fails

    def configure(self, p):
        p.add_argument("--count", type=int, required=True)
        sub = p.add_subparsers(dest="what", required=True)
        sub.add_parser("go").add_argument("--fast", action="store_true")

    def check(self, args):
        if self.check_fails:
            raise Refused(f"--count {args.count}: refused")

    def run(self, args):
        if self.fail:
            raise self.fail
        return 0 if args.count else 5


def test_success_and_the_commands_own_exit_code():
    assert Example().main(["--count", "1", "go"]) == 0
    assert Example().main(["--count", "0", "go"]) == 5


def test_usage_errors_exit_2_with_one_line_and_a_pointer_to_help(capsys):
    assert Example().main(["go"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["loggp example: the following arguments are required: --count",
                                "(see `loggp example --help`)"]
    assert Example().main(["--count", "1", "go", "--fas"]) == 2  # no abbreviations
    assert "loggp example go: unrecognized arguments: --fas" in capsys.readouterr().err  # the subcommand's
    assert Example().main(["--count", "x", "go"]) == 2
    assert "'x'" in capsys.readouterr().err


def test_help_returns_0_instead_of_exiting(capsys):
    assert Example().main(["--help"]) == 0
    assert "usage: loggp example" in capsys.readouterr().out


def test_errors_map_to_their_exit_codes(capsys):
    assert Example(fail=Refused("no")).main(["--count", "1", "go"]) == 4
    assert capsys.readouterr().err == "loggp example: no\n"
    assert Example(fail=CommandError("broken")).main(["--count", "1", "go"]) == 1
    assert Example(fail=CommandError("gone", exit_code=127)).main(["--count", "1", "go"]) == 127
    assert Example(fail=UsageError("bad")).main(["--count", "1", "go"]) == 2
    assert capsys.readouterr().err.splitlines() == ["loggp example: broken", "loggp example: gone",
                                                    "loggp example: bad"]


def test_a_check_failure_is_a_usage_error(capsys):
    assert Example(check_fails=True).main(["--count", "3", "go"]) == 2
    assert capsys.readouterr().err == "loggp example: --count 3: refused\n"


def test_interrupt_exits_130_and_bugs_keep_their_traceback(capsys):
    assert Example(fail=KeyboardInterrupt()).main(["--count", "1", "go"]) == 130
    assert capsys.readouterr().err == "loggp example: interrupted\n"
    with pytest.raises(ZeroDivisionError):
        Example(fail=ZeroDivisionError()).main(["--count", "1", "go"])


class Knobs(Command):
    name = "knobs"

    def configure(self, p):
        p.add_argument("--L", once=True)
        p.add_argument_group("files").add_argument("--out")
        p.add_mutually_exclusive_group().add_argument("--G", once=True)
        p.add_argument("-n", type=int)
        p.add_argument("--quiet", action="store_true")
        p.add_argument("program", nargs="*")

    def run(self, args):
        print(args.L, args.out, args.n, args.program)
        return 0


def test_a_value_may_start_with_a_dash_so_its_own_check_names_it(capsys):
    assert Knobs().main(["--L", "-1us", "--out", "-x", "-n", "-3", "p"]) == 0
    assert capsys.readouterr().out == "-1us -x -3 ['p']\n"


def test_an_option_is_not_taken_as_a_value(capsys):
    assert Knobs().main(["--L", "--quiet"]) == 2
    assert "argument --L: expected one argument" in capsys.readouterr().err
    assert Knobs().main(["--L", "-n", "2"]) == 2
    assert "argument --L: expected one argument" in capsys.readouterr().err


def test_a_once_option_given_twice_is_refused_naming_both_values(capsys):
    assert Knobs().main(["--L", "1us", "--L", "2us"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == "loggp knobs: --L is given twice ('1us', then '2us'); give it once"
    assert Knobs().main(["--G", "1ns/B", "--G", "2ns/B"]) == 2
    assert "--G is given twice ('1ns/B', then '2ns/B')" in capsys.readouterr().err
    assert Knobs().main(["--out", "a", "--out", "b"]) == 0  # other options keep argparse's last-wins
    assert capsys.readouterr().out == "None b None []\n"


@pytest.mark.parametrize("typed, meant", [("--latency", "--L"), ("--l", "--L"), ("--quite", "--quiet")])
def test_an_unknown_option_gets_a_suggestion(capsys, typed, meant):
    assert Knobs().main([typed, "5us"]) == 2
    assert f"unrecognized arguments: {typed} (did you mean {meant}?)" in capsys.readouterr().err


def test_no_suggestion_for_an_option_like_none(capsys):
    assert Knobs().main(["--zzzz"]) == 2
    assert capsys.readouterr().err.splitlines()[0] == "loggp knobs: unrecognized arguments: --zzzz"


def test_a_whole_number_range_is_shown_in_whole_numbers():
    import argparse
    from loggp.knobs.command import number_in
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'0' must be in \[1, 1073741824\]$"):
        number_in(int, 1, 1 << 30)("0")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'0' must be in \(0, 1e\+09\]$"):
        number_in(float, 0, 1e9, low_open=True)("0")


def test_a_subcommands_unknown_option_is_judged_by_its_own_options(capsys):
    # the other subcommand has --L: it must not be suggested where it does not exist
    class Two(Command):
        name = "two"

        def configure(self, p):
            sub = p.add_subparsers(dest="what", required=True)
            sub.add_parser("up").add_argument("--name")
            sub.add_parser("set").add_argument("--L")

        def run(self, args):
            return 0

    assert Two().main(["up", "--latency", "5us"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["loggp two up: unrecognized arguments: --latency 5us", "(see `loggp two up --help`)"], err
    assert Two().main(["up", "--nam", "x"]) == 2
    assert "(did you mean --name?)" in capsys.readouterr().err
