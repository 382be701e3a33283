"""`loggp explain`: where a prediction and an emulation part ways, per class of MPI call
(loggp.analysis.explain). Docs: docs/predict.md."""
from pathlib import Path

from loggp.knobs import FLAGS, KnobError, parse as parse_knobs
from loggp.knobs.command import EXIT_USAGE, Command, CommandError, UsageError, positive_int
from loggp.knobs.vocabulary import FLAG_NAMES, knobs_of

from . import explain, loggops, predict, trace


class ExplainCommand(Command):
    name = "explain"
    description = ("Where a prediction and an emulation part ways: two traces of one program "
                   "(`loggp run --trace DIR`), one at the baseline knobs and one at a setting, and the knob "
                   "delta between them. Each MPI call's added time, emulated (the two traces) and predicted "
                   "(the baseline trace replayed at the machine's parameters and with the delta), summed per "
                   "class of call (name; self, eager or rendezvous message; collective), per rank split into "
                   "time inside and outside calls, and the calls that differ most.")
    example = "loggp explain cg-base cg-L200us --L 200us --machine probe.json"

    def configure(self, p):
        p.add_argument("base", metavar="BASE_DIR", help="the trace folder of the run at the baseline knobs")
        p.add_argument("setting", metavar="SETTING_DIR", help="the trace folder of the same program at the setting")
        for setting, flag in FLAGS.items():
            what = " and ".join(knobs_of(setting))
            p.add_argument(flag, metavar="V", once=True,
                           help=f"what the setting adds to {what} over the baseline (default: not changed)")
        p.add_argument("--machine", metavar="PROBE_JSON",
                       help="the machine's own o_s, o_r, g, G, L and eager limit from `loggp probe --json` "
                            "(default: those `loggp predict` uses; docs/predict.md)")
        p.add_argument("--top", metavar="N", type=positive_int, default=10,
                       help="how many single calls to list, those that differ most")

    def check(self, args):
        texts = {FLAG_NAMES[flag]: getattr(args, flag) for flag in FLAG_NAMES if getattr(args, flag) is not None}
        if not texts:
            raise UsageError("no knob given: say what the setting adds over the baseline, e.g. --L 200us")
        try:
            args.deltas = {knob: parse_knobs({knob: text})[knob] for knob, text in texts.items()}
        except KnobError as err:
            raise UsageError(str(err)) from None
        args.setting_text = ", ".join(f"{FLAGS[k]} {t}" for k, t in texts.items())
        for folder in (args.base, args.setting):
            if not Path(folder).is_dir():
                raise UsageError(f"{folder}: no such folder")

    def run(self, args):
        machine = predict.machine_from_probe(args.machine) if args.machine else predict.DEFAULT_MACHINE
        try:
            base = trace.read_folder(args.base)
            setting = trace.read_folder(args.setting)
            ex = explain.explain(base, setting, machine, args.deltas, args.top)
        except ValueError as err:  # a trace that cannot be read, or two that differ
            raise CommandError(str(err), exit_code=EXIT_USAGE) from None
        except loggops.DeadlockError as err:
            raise CommandError(f"{args.base}: {err}") from None
        print(explain.report(ex, args.setting_text), end="")
        return 0
