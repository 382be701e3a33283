"""What every part writes files with: one mode for every result file."""
import os


def created_mode():
    """The mode open() gives a new file under the current umask. Atomic writers use it
    for their temporary file (mkstemp makes 0600), so every result file gets one mode."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
