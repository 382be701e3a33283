"""`loggp tune packet`: the packet-size tuning experiment (Michel and Devaney's
AutoLink). Sweeps PacketSize for a linked structure sent record by record in
packets, under one or more knob settings, and reports the measured best size
per setting beside LogGP's prediction of it (docs/packet.md).

Exit status as every command with verdicts (loggp.experiments.precision.exit_status):
3 when a setting's predicted best missed (outside 2x of every size tied with the
measured best), else 0; 1 a failed run, 2 bad usage."""
import sys
import time
from pathlib import Path

from loggp.knobs import grammar
from loggp.knobs.command import Command, UsageError, number_in, positive_int

from . import packet_output, packet_sweep, precision

DEFAULT_SETTINGS = ("zero", "o=10us", "G=2ns/B")
MAX_SIZE = 1 << 30
MAX_STRUCTURE = (1 << 31) - 1


def power_of_two_sizes(low, high):
    """Powers of two from low up to high (both included when powers of two)."""
    sizes, s = [], 1
    while s < low:
        s *= 2
    while s <= high:
        sizes.append(s)
        s *= 2
    return sizes


class TuneCommand(Command):
    name = "tune"
    description = __doc__
    example = "loggp tune packet --setting zero --setting o=10us --setting G=2ns/B --out results/tune-packet"
    def configure(self, p):
        sub = p.add_subparsers(dest="what", metavar="packet", required=True)
        q = sub.add_parser("packet", help="sweep PacketSize for a linked structure; measured vs LogGP best",
                           description=__doc__, example=self.example)
        q.add_argument("--setting", action="append", metavar="SPEC",
                       help="a knob setting: 'zero' or knob=value,... with knobs o, o_s, o_r, g, G, L as in "
                            "`loggp probe --knob-set` "
                            "(e.g. o=10us or G=2ns/B,L=5us); repeatable, each measured in its own run "
                            f"(default {' '.join(DEFAULT_SETTINGS)})")
        q.add_argument("--records", type=number_in(int, 1, 1 << 24), default=4096,
                       help="N, records in the structure")
        q.add_argument("--record-size", type=grammar.size(24, 1 << 20), default="64", metavar="SIZE",
                       help="R, bytes per record (a 24-byte header of id and two child ids, then payload)")
        q.add_argument("--min-size", type=grammar.size(1, MAX_SIZE), default="64", metavar="SIZE",
                       help="smallest PacketSize, e.g. 64 or 4K")
        q.add_argument("--max-size", type=grammar.size(1, MAX_SIZE), default="1M", metavar="SIZE",
                       help="largest PacketSize, e.g. 64K or 1M")
        q.add_argument("--reps", type=positive_int, default=7,
                       help="repetitions per size, interleaved over the sizes (median and its 95 %% interval; "
                            "an interval needs 6)")
        q.add_argument("--no-refine", action="store_true",
                       help="skip the second pass at 3/4 and 3/2 of each setting's best power of two")
        q.add_argument("--calibration", metavar="FILE",
                       help="calibration.json from `loggp calibrate --out` for the machine's o, g, L, G "
                            "(default: a quick probe at zero knobs)")
        q.add_argument("--out", default="results/tune-packet", metavar="DIR", help="results folder")
        q.add_argument("--timeout", type=grammar.duration(0.0, 86400.0, low_open=True), default="10min",
                       metavar="T", help="how long one benchmark run may take, e.g. 90s or 10min")

    def check(self, args):
        try:
            self.check_packet(args)
        except UsageError as err:
            err.prog = err.prog or f"{self.prog} {args.what}"
            raise

    def check_packet(self, args):
        specs = args.setting or list(DEFAULT_SETTINGS)
        settings, labels = [], set()
        for spec in specs:
            try:
                label, knobs = packet_sweep.parse_setting(
                    spec, warn=lambda line: print(f"{self.prog} {args.what}: {line}", file=sys.stderr))
            except ValueError as err:
                raise UsageError(str(err)) from None
            if label in labels:
                raise UsageError(f"--setting '{spec}' given twice")
            labels.add(label)
            settings.append((label, knobs))
        args.settings = settings
        if args.records * args.record_size > MAX_STRUCTURE:
            raise UsageError(f"--records {args.records} x --record-size {args.record_size} is over "
                             f"{MAX_STRUCTURE} bytes (one packet must fit an MPI count)")
        if args.min_size > args.max_size:
            raise UsageError(f"--min-size {args.min_size} is larger than --max-size {args.max_size}")
        args.sizes = power_of_two_sizes(args.min_size, args.max_size)
        if not args.sizes:
            raise UsageError(f"no power of two between --min-size {args.min_size} and --max-size {args.max_size}")
        if args.calibration and not Path(args.calibration).is_file():
            raise UsageError(f"--calibration '{args.calibration}': no such file")
        try:
            Path(args.out).resolve().mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UsageError(f"cannot use --out {args.out}: {err}") from None

    def run(self, args):
        return tune_packet(args, packet_sweep.run_benchmark, packet_sweep.probe_machine)


def log(msg):
    print(f"[loggp tune packet] {msg}", file=sys.stderr, flush=True)


def tune_packet(args, runner, prober):
    """The sweep over settings; writes the outputs and prints the report."""
    started = time.monotonic()
    if args.calibration:
        machine, source = packet_sweep.machine_from_calibration(args.calibration)
    else:
        log("no --calibration: a quick probe of the machine at zero knobs")
        machine, source = prober()

    def run(knobs, sizes, records, record_size, reps):
        return runner(knobs, sizes, records, record_size, reps, timeout=args.timeout)

    results = [packet_sweep.sweep_setting(label, knobs, machine, args.sizes, args.records, args.record_size,
                                          args.reps, not args.no_refine, run, log)
               for label, knobs in args.settings]
    summary = {"schema": "loggp-tune-packet/1", "records": args.records, "record_size": args.record_size,
               "reps": args.reps, "sizes": args.sizes, "machine": machine, "machine_source": source,
               "settings": results, "elapsed_s": round(time.monotonic() - started, 1)}
    out = Path(args.out).resolve()
    print(packet_output.write_outputs(out, summary), end="")
    print(f"results: {out}/packet.{{json,csv,txt,png}}")
    return precision.exit_status(r["verdict"] for r in results)


def main(argv=None):
    return TuneCommand().main(argv)


if __name__ == "__main__":
    sys.exit(main())
