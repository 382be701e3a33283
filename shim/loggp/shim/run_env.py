"""`loggp run`'s check of the run's LOGGP_* variables before anything starts:
`loggp-knobs show` checks them with libloggp.so's own parsers, so what every
rank's MPI_Init would refuse (exit 1, a line per rank) is refused here once,
with one line and exit 2, --dry-run or not. Also a warning for jitter that has
nothing to draw around."""
import json
import re

from loggp.knobs import KnobError, knobs_program

# The variables `loggp run` sets from its flags, named by the flag in a message.
FLAGS = {"LOGGP_L_JITTER": "--L-jitter", "LOGGP_O_JITTER": "--o-jitter", "LOGGP_SEED": "--seed",
         "LOGGP_TOPOLOGY": "--topology", "LOGGP_RANKS_PER_NODE": "--ranks-per-node", "LOGGP_L_INTER": "--L-inter",
         "LOGGP_G_INTER": "--G-inter", "LOGGP_PROFILE": "--profile", "LOGGP_TRACE": "--trace",
         "LOGGP_SCOPE": "--scope", "LOGGP_OUTSIDE": "--outside", "LOGGP_ENGINE": "--engine"}


def named(variable, value, additions):
    """How the user gave a variable: `--flag value` if this run set it, else VAR=value."""
    if variable in additions and variable in FLAGS:
        return f"{FLAGS[variable]} {value}"
    return f"{variable}={value}"


def in_flag_terms(message, additions):
    """loggp-knobs' "VAR=VALUE: why" in the words the user used."""
    for variable, value in additions.items():
        prefix = f"{variable}={value}: "
        if variable in FLAGS and message.startswith(prefix):
            why = message[len(prefix):].removeprefix(f"'{value}': ")
            return f"{named(variable, value, additions)}: {why}"
    return message


def check(additions, base_env, error, ranks_here=True, ranks=None):
    """Checks base_env with additions' LOGGP_* variables over it; raises error(one line)
    for what MPI_Init would refuse and for per-pair values no pair of the run's ranks
    would get (as a study refuses them), returns the warning lines (jitter with nothing
    to draw around, LOGGP_* variables loggp does not read). ranks_here False: the ranks
    may run on other hosts, whose folders and nodes this host cannot judge."""
    run_vars = {name: value for name, value in additions.items() if name.startswith("LOGGP_")}
    env = {**base_env, **run_vars}
    where = ([] if ranks_here else ["--ranks-elsewhere"]) + ([] if ranks is None else ["--ranks", str(ranks)])
    try:
        shown = json.loads(knobs_program("show", "--json", *where, env=env))
    except KnobError as err:
        # show's own closing line speaks of "this shell"; a hint how to recover stays
        first, *rest = str(err).splitlines()
        hint = [line for line in rest if not line.startswith("(MPI programs started from this shell")]
        raise error("\n".join([in_flag_terms(first, run_vars), *hint])) from None
    lines = []
    for warning in shown.get("warnings", []):
        if NEVER_APPLIED.search(warning):
            raise error(in_flag_words(warning, run_vars))
        lines.append(f"warning: {warning}")
    return jitter_warnings(shown, env, run_vars) + lines


# loggp-knobs show's words for a per-pair value no pair gets (unused.c)
NEVER_APPLIED = re.compile(r" (is|are) never applied: ")


def in_flag_words(text, additions):
    """Every VAR=VALUE and bare VAR of a variable `loggp run` sets from a flag, in that flag's words."""
    for variable, value in additions.items():
        if variable in FLAGS:
            text = text.replace(f"{variable}={value}", f"{FLAGS[variable]} {value}")
    for variable, flag in FLAGS.items():
        text = re.sub(rf"\b{variable}\b(?!=)", flag, text)
    return text


def jitter_warnings(shown, env, run_vars):
    """Jitter draws around L (or o) and never moves a zero one: one line each for a
    jitter that, at the knobs the run starts with, does nothing."""
    effective = {knob: entry["value"] for knob, entry in shown["effective"].items()}
    lines = []
    if shown["jitter"]["L"] != "none" and effective["L"] == "0ns" and not shown["per_pair_L"]:
        lines.append(f"warning: {named('LOGGP_L_JITTER', env['LOGGP_L_JITTER'], run_vars)} does nothing while L "
                     "is 0: jitter draws L around its set value (give --L, or `loggp-knobs set --L`)")
    if shown["jitter"]["o"] != "none" and effective["o_s"] == effective["o_r"] == "0ns":
        lines.append(f"warning: {named('LOGGP_O_JITTER', env['LOGGP_O_JITTER'], run_vars)} does nothing while "
                     "o_s and o_r are 0: jitter draws o around its set value (give --o, or `loggp-knobs set --o`)")
    return lines
