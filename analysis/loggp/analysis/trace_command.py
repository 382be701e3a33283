"""`loggp trace export`: a trace (`loggp run --trace DIR`, or an OTF2 archive) in the
field's formats: a GOAL schedule for LogGOPSim (loggp.analysis.goal) or an OTF2
archive for Vampir, Scalasca and other OTF2 readers (loggp.analysis.otf2_export).
Docs: docs/trace-formats.md."""
from pathlib import Path

from loggp.knobs.command import EXIT_USAGE, Command, CommandError, UsageError
from loggp.knobs.files import write_text_atomic

from . import goal, otf2_export, trace_input


class TraceCommand(Command):
    name = "trace"
    description = ("Traces in the field's formats: `loggp trace export --goal` writes the schedule LogGOPSim "
                   "reads, `--otf2` an OTF2 archive (Score-P's layout) that Vampir and otf2-print read.")
    example = "loggp trace export --goal cg-trace cg.goal"

    def configure(self, p):
        sub = p.add_subparsers(dest="action", required=True)
        e = sub.add_parser("export", help="write a trace as a GOAL schedule or an OTF2 archive",
                           description="Write a trace folder (or an OTF2 archive) as a GOAL schedule (--goal, "
                                       "OUT a file) or as an OTF2 archive (--otf2, OUT a new folder).",
                           example="loggp trace export --otf2 cg-trace cg-otf2")
        fmt = e.add_mutually_exclusive_group(required=True)
        fmt.add_argument("--goal", action="store_true", help="GOAL text, as LogGOPSim's txt2bin reads it")
        fmt.add_argument("--otf2", action="store_true", help="an OTF2 archive: OUT/traces.otf2, traces.def, traces/")
        e.add_argument("trace_dir", metavar="TRACE_DIR", help="the trace folder (trace.<rank>.bin), or an OTF2 archive")
        e.add_argument("out", metavar="OUT", help="the GOAL file, or the archive's folder (must not exist)")

    def check(self, args):
        source = Path(args.trace_dir)
        if not source.exists():
            raise UsageError(f"{args.trace_dir}: no such folder")
        out = Path(args.out)
        if not out.resolve().parent.is_dir():
            raise UsageError(f"{args.out}: its folder {out.resolve().parent} does not exist")
        if args.otf2 and out.exists():
            raise UsageError(f"{args.out}: exists; give a new folder for the archive")
        if args.goal and out.is_dir():
            raise UsageError(f"{args.out}: a folder; give the GOAL file's name")

    def run(self, args):
        try:
            traces = trace_input.read(args.trace_dir)
        except ValueError as err:
            raise CommandError(str(err), exit_code=EXIT_USAGE) from None
        if args.goal:
            try:
                text = goal.export(traces, source=str(args.trace_dir))
            except ValueError as err:
                raise CommandError(f"{args.trace_dir}: {err}", exit_code=EXIT_USAGE) from None
            write_text_atomic(args.out, text)
            print(f"{args.out}: GOAL schedule of {len(traces)} ranks ({text.count(chr(10))} lines)")
            return 0
        skipped = otf2_export.write(traces, args.out)
        print(f"{args.out}: OTF2 archive of {len(traces)} ranks ({Path(args.out) / 'traces.otf2'})")
        if skipped:
            print("  without MPI events (communicators smaller than MPI_COMM_WORLD, whose members the trace does "
                  "not record): " + ", ".join(f"{n} x{c}" for n, c in skipped.most_common(5)))
        return 0
