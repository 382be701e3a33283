"""Is other work sharing the cores? A measuring command samples the machine's CPU use while
it runs nothing itself (at its start and at its end) and says so in one line before it
reports: another job busy-polling both cores made `--L 20us` add 37-40 us.

Judged on the share of CPU time others used (from /proc/stat, this process's own use taken
out; the hypervisor's steal counts as others'), not on any fixed timing."""
import os
import resource
import time

# Other work on more than this share of the cores puts its noise into every figure.
BUSY_SHARE = 0.25
SAMPLE_SECONDS = 0.5


def cpu_ticks(stat_text):
    """(busy, total) clock ticks of all CPUs from /proc/stat's `cpu` line; iowait is idle,
    steal (time the hypervisor gave to others) is busy."""
    for line in stat_text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            values = [int(v) for v in fields[1:9]]
            values += [0] * (8 - len(values))
            user, nice, system, idle, iowait, irq, softirq, steal = values
            busy = user + nice + system + irq + softirq + steal
            return busy, busy + idle + iowait
    raise ValueError("no 'cpu' line in /proc/stat")


def others_cores(before, after, own_cpu_s, ticks_per_s, cores):
    """Cores kept busy by other processes between two cpu_ticks samples, our own CPU
    seconds taken out; never below 0."""
    busy = after[0] - before[0]
    total = after[1] - before[1]
    if total <= 0:
        return 0.0
    own_ticks = own_cpu_s * ticks_per_s
    return max(busy - own_ticks, 0.0) / total * cores


def _own_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def sample(seconds=SAMPLE_SECONDS, read=None, sleep=time.sleep):
    """Cores other work used over `seconds` now, or None where /proc/stat is unreadable."""
    read = read or (lambda: open("/proc/stat").read())
    try:
        own0, before = _own_cpu_s(), cpu_ticks(read())
        sleep(seconds)
        own1, after = _own_cpu_s(), cpu_ticks(read())
    except (OSError, ValueError):
        return None
    return others_cores(before, after, own1 - own0, os.sysconf("SC_CLK_TCK"), os.cpu_count() or 1)


def shared_cores_line(samples, cores=None, share=BUSY_SHARE, when="at its start and end",
                      consequence="its noise is in every figure below"):
    """One line when other work used more than `share` of the cores in any sample
    (None: not measured), else None."""
    cores = cores or os.cpu_count() or 1
    known = [s for s in samples if s is not None]
    if not known or max(known) <= share * cores:
        return None
    shown = ", ".join(f"{s:.1f}" for s in known)
    return (f"other work shares the cores: it used {shown} of {cores} cores while this command measured "
            f"nothing ({when}); {consequence}")


RUN_SAMPLE_SECONDS = 0.25


def before_run_line(interactive, sampler=None):
    """`loggp run`'s note, from a short sample just before it starts the program; only when
    a person reads it (a study's runs, not interactive, are judged by the study)."""
    if not interactive:
        return None
    share = (sampler or (lambda: sample(RUN_SAMPLE_SECONDS)))()
    return shared_cores_line([share], when="just before it started the program",
                             consequence="the program's timings will carry its noise")


class LoadWatch:
    """Samples at start() and at end(); line() says whether other work shared the cores."""
    def __init__(self, sampler=sample):
        self.sampler = sampler
        self.samples = []

    def start(self):
        self.samples = [self.sampler()]
        return self

    def end(self):
        self.samples.append(self.sampler())
        return self

    def line(self, cores=None):
        return shared_cores_line(self.samples, cores)

    def as_dict(self, cores=None):
        return {"others_cores": self.samples, "cores": cores or os.cpu_count() or 1,
                "busy_share_limit": BUSY_SHARE, "shared": self.line(cores) is not None}
