"""The base every `loggp` subcommand is built on: one parser class and one path
from an error to its message and exit code.

It lives in the lowest layer (beside the knob wrapper) so that every part can
define its commands without importing the `loggp` root, which registers them.

A command says which exceptions it reports and with which exit code
(`errors`); anything else is a bug and keeps its traceback. Errors raised while
parsing or checking the arguments are usage errors (exit 2) whatever their
class. Every message reads "PROG: MESSAGE" on stderr; a usage error adds one
line pointing at PROG --help rather than repeating the usage.
"""
import argparse
import difflib
import sys

from .vocabulary import FLAGS, LONG_NAMES, flag_for_name

# Exit codes, the same for every command (docs/cli.md).
EXIT_OK = 0
EXIT_FAILED = 1       # the run failed
EXIT_USAGE = 2        # bad usage or a bad value
EXIT_MISSED = 3       # it ran, and a verdict missed its goal
EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """An error a command reports without a traceback; exit 1 unless told."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.exit_code = exit_code


class UsageError(CommandError):
    """Bad usage or a bad value (exit 2). From the parser it carries the parser's prog,
    which names a subcommand and its --help."""

    def __init__(self, message, prog=None):
        super().__init__(message, EXIT_USAGE)
        self.prog = prog


# Long names a newcomer may try for a knob flag, for "did you mean".
KNOB_NAMES = {long: FLAGS[setting] for long, setting in LONG_NAMES.items()}


class Once(argparse.Action):
    """Stores an option's one value; refuses the option given twice, which would
    otherwise silently keep the last value."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = parser.given_once  # reset by each parse (Parser.parse_known_args)
        if self.dest in given:
            raise argparse.ArgumentError(None, f"{option_string} is given twice ('{given[self.dest]}', then "
                                               f"'{values}'); give it once")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class Parser(argparse.ArgumentParser):
    """argparse, with bad usage raised as a UsageError instead of exiting, so the
    command's one error path reports it. Subparsers get the same class.

    Every --help shows each option's default (added to its help unless the help
    already says it) and, given `example`, one example command at its end.

    An option that takes a value takes one starting with '-' too (`--L -1us`), so
    the value's own check names it; add_argument(..., once=True) refuses the option
    given twice."""

    def __init__(self, *args, allow_abbrev=False, example=None, **kw):
        super().__init__(*args, allow_abbrev=allow_abbrev, **kw)
        self.example = example

    def add_argument(self, *args, once=False, **kw):
        if once:
            kw["action"] = Once
        action = super().add_argument(*args, **kw)
        add_default(action)
        return action

    def add_argument_group(self, *args, **kw):
        return _group(super().add_argument_group(*args, **kw))

    def add_mutually_exclusive_group(self, **kw):
        return _group(super().add_mutually_exclusive_group(**kw))

    def format_help(self):
        text = super().format_help()
        return text + f"\nexample:\n  {self.example}\n" if self.example else text

    def parse_known_args(self, args=None, namespace=None):
        argv = sys.argv[1:] if args is None else list(args)
        self.given_once = {}
        namespace, extra = super().parse_known_args(self.dash_values(argv), namespace)
        if not hasattr(namespace, "_parsed_by"):  # a subcommand's parser returns first
            namespace._parsed_by = self
        return namespace, extra

    def parse_args(self, args=None, namespace=None):
        args, extra = self.parse_known_args(args, namespace)
        # unknown options are the subcommand's: its options to suggest, its --help to name
        inner = vars(args).pop("_parsed_by", self)
        if extra:
            inner.error(f"unrecognized arguments: {' '.join(extra)}{inner.suggestion(extra)}")
        return args

    def knob_name_as_flag(self, token):
        """A knob's name written as a flag (--o_s, --o_s=1us) read as its flag (--os), with
        one line saying so, where this parser has that flag; else the token as it is."""
        option, eq, value = token.partition("=")
        flag = flag_for_name(option)
        if not flag or flag not in self._option_string_actions:
            return token
        print(f"{self.prog}: {option} is written {flag} on the command line; read as {flag}", file=sys.stderr)
        return flag + eq + value

    def dash_values(self, argv):
        """argv with `--OPT -VALUE` joined into `--OPT=-VALUE` for a long option that
        takes one value, unless -VALUE is itself an option: argparse would otherwise
        say only "expected one argument"; a knob's name as a flag read as the flag
        (knob_name_as_flag). Stops where the options end."""
        ends = any(isinstance(a, argparse._SubParsersAction) or a.nargs == argparse.REMAINDER
                   for a in self._actions if not a.option_strings)
        known = self._option_string_actions
        out, i = list(argv), 0
        while i < len(out):
            token = out[i]
            if token == "--":
                break
            token = out[i] = self.knob_name_as_flag(token)
            action = known.get(token)
            if action is None:
                if ends and not token.startswith("-"):
                    break  # a subcommand, or the program whose arguments follow
                i += 1
                continue
            value = out[i + 1] if i + 1 < len(out) else None
            if (value and action.nargs is None and token.startswith("--") and value.startswith("-")
                    and not value.startswith("--") and value.split("=")[0] not in known and value[:2] not in known):
                out[i:i + 2] = [f"{token}={value}"]
            elif value and action.nargs in (None, "?") and not value.startswith("-"):
                i += 1  # the option's value, not a positional argument
            i += 1
        return out

    def option_strings(self):
        """Every option string of this parser and its subparsers."""
        found = set(self._option_string_actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    found |= sub.option_strings() if isinstance(sub, Parser) else set(sub._option_string_actions)
        return found

    def suggestion(self, extra):
        """" (did you mean --X?)" for the first unknown option, or ""."""
        unknown = next((a.split("=")[0] for a in extra if a.startswith("--")), None)
        if unknown is None:
            return ""
        options = self.option_strings()
        named = KNOB_NAMES.get(unknown[2:].lower())
        same_but_case = [o for o in options if o.lower() == unknown.lower()]
        close = difflib.get_close_matches(unknown, sorted(options), n=1, cutoff=0.8)
        match = named if named in options else (same_but_case or close or [None])[0]
        return f" (did you mean {match}?)" if match else ""

    def error(self, message):
        raise UsageError(message, prog=self.prog)


def add_default(action):
    """Appends " (default X)" to an option's help when it has a default to show and
    its help does not mention one."""
    if (not action.option_strings or not action.help or action.help == argparse.SUPPRESS
            or "default" in action.help or action.default in (None, False, True, argparse.SUPPRESS)
            or action.nargs == 0):
        return
    default = action.default
    if isinstance(default, (list, tuple)):
        default = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default)
    action.help += f" (default {default})"


def _group(group):
    """A group whose options get their defaults shown too, and take once=True."""
    plain = group.add_argument

    def add_argument(*args, once=False, **kw):
        if once:
            kw["action"] = Once
        action = plain(*args, **kw)
        add_default(action)
        return action
    group.add_argument = add_argument
    return group


def number_in(kind, low, high, low_open=False):
    """An argparse type: a number of `kind` (int or float) in [low, high], or (low, high]
    with low_open; the error names the value and the range."""
    what = "a whole number" if kind is int else "a number"
    shown = (lambda v: str(int(v))) if kind is int else (lambda v: f"{v:g}")  # never 1.07374e+09 for 2^30
    span = f"{'(' if low_open else '['}{shown(low)}, {shown(high)}]"

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {what}") from None
        if not ((low < value) if low_open else (low <= value)) or not value <= high:
            raise argparse.ArgumentTypeError(f"'{text}' must be in {span}")
        return value
    return parse


def positive_int(text):
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' must be at least 1")
    return value


class Command:
    """One subcommand: `loggp NAME`. Subclasses set name (and description), and define
    configure(parser) (or parser(), or parse(argv) for a command that passes unknown
    options on), optionally check(args), and run(args) -> exit code. Its one-line
    summary lives in the registry (loggp.cli)."""

    name = ""
    description = None
    # One example command line, shown at the end of --help.
    example = None
    formatter_class = argparse.HelpFormatter
    # (exception class, exit code) pairs, first match wins; CommandError carries its own code.
    errors = ()
    # What an interrupted command says (exit 130).
    interrupted = "interrupted"

    @property
    def prog(self):
        return f"loggp {self.name}"

    def parser(self):
        p = Parser(prog=self.prog, description=self.description, formatter_class=self.formatter_class,
                   example=self.example)
        self.configure(p)
        return p

    def configure(self, parser):
        """Adds the command's arguments to parser."""

    def parse(self, argv):
        """argv -> the arguments run() takes. Bad usage raises UsageError; --help
        prints and raises SystemExit with the exit code."""
        return self.parser().parse_args(argv)

    def check(self, args):
        """Checks argparse cannot make; whatever they raise is a usage error."""

    def run(self, args):
        raise NotImplementedError

    def exit_code(self, err):
        """The exit code for an error this command reports, or None for a bug."""
        for kind, code in self.errors:
            if isinstance(err, kind):
                return code
        if isinstance(err, CommandError):
            return err.exit_code
        return None

    def report(self, err, code):
        prog = err.prog if isinstance(err, UsageError) and err.prog else self.prog
        print(f"{prog}: {err}", file=sys.stderr)
        if isinstance(err, UsageError) and err.prog:
            print(f"(see `{prog} --help`)", file=sys.stderr)
        return code

    def main(self, argv=None):
        """Runs the command on argv (default sys.argv[1:]); returns its exit code."""
        argv = sys.argv[1:] if argv is None else list(argv)
        try:
            try:
                args = self.parse(argv)
            except SystemExit as done:  # --help: it has been printed
                return done.code if isinstance(done.code, int) else 0
            try:
                self.check(args)
            except Exception as err:
                if self.exit_code(err) is None:
                    raise
                return self.report(err, EXIT_USAGE)
            return self.run(args)
        except KeyboardInterrupt:
            print(f"{self.prog}: {self.interrupted}", file=sys.stderr)
            return EXIT_INTERRUPTED
        except Exception as err:
            code = self.exit_code(err)
            if code is None:
                raise
            return self.report(err, code)
