"""The shape check every optional study table ([jitter], [topology]) shares."""


def check(table, name, keys, fail):
    """Refuses a [name] that is not a table or holds a key outside `keys` (in the
    order given, for the message); fail(message, key) reports it."""
    if not isinstance(table, dict):
        fail(f"'{name}' must be a table [{name}]", name)
    for key in table:
        if key not in keys:
            fail(f"unknown key '{key}' in [{name}] (expected: {', '.join(keys)})", key)
