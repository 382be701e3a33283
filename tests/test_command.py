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


def test_usage_errors_exit_2_with_the_usage_and_the_parsers_prog(capsys):
    assert Example().main(["go"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: loggp example") and "loggp example: the following arguments" in err
    assert Example().main(["--count", "1", "go", "--fas"]) == 2  # no abbreviations
    assert "loggp example: unrecognized arguments: --fas" in capsys.readouterr().err
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
