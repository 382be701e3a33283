"""The `loggp` command: dispatches to each part's subcommand."""
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print("loggp: no subcommands yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
