"""The study store: schema versions, migrations and atomic rows."""
import sqlite3

import pytest

from loggp.harness import store


def _columns(conn, table):
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def test_new_store_is_at_the_latest_version(tmp_path):
    conn = store.connect(str(tmp_path / "s.sqlite"))
    assert store.schema_version(conn) == store.SCHEMA_VERSION == len(store.MIGRATIONS)
    assert "error" in _columns(conn, "runs")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "runs_by_setting" in names


def _v1_run(conn):
    conn.execute("INSERT INTO plan (round, position, setting_key, benchmark, np, class, sweep, knobs)"
                 " VALUES (0, 0, 'k', 'cg', 2, 'S', 'baseline', '{}')")
    conn.execute(
        "INSERT INTO runs (plan_id, round, benchmark, kind, class, np, sweep, knobs, o_s_ns, o_r_ns,"
        " g_ns, G_ns_per_byte, L_ns, command, started_at, finished_at, wall_seconds,"
        " runtime_seconds, verified, exit_status, status) VALUES (1, 0, 'cg', 'kernel', 'S', 2,"
        " 'baseline', '{}', 0, 0, 0, 0, 0, 'cmd', 't0', 't1', 1.5, 1.25, 1, 0, 'ok')")


def test_version_1_store_migrates_and_keeps_its_rows(tmp_path):
    path = str(tmp_path / "old.sqlite")
    conn = store.connect(path, migrate_to=1)
    assert store.schema_version(conn) == 1
    assert "error" not in _columns(conn, "runs")
    _v1_run(conn)
    conn.close()
    s = store.Store(path)
    assert store.schema_version(s.conn) == store.SCHEMA_VERSION
    runs = s.runs()
    assert len(runs) == 1 and runs[0]["runtime_seconds"] == 1.25 and runs[0]["error"] is None
    s.close()


def test_failed_migration_leaves_the_old_version(tmp_path, monkeypatch):
    path = str(tmp_path / "s.sqlite")
    store.connect(path, migrate_to=1).close()
    latest = store.SCHEMA_VERSION
    monkeypatch.setattr(store, "MIGRATIONS", store.MIGRATIONS + ["CREATE TABLE plan (x)"])
    monkeypatch.setattr(store, "SCHEMA_VERSION", len(store.MIGRATIONS))
    with pytest.raises(sqlite3.OperationalError):
        store.connect(path)
    conn = sqlite3.connect(path)
    # The real migrations committed, the broken last one rolled back entirely.
    assert conn.execute("PRAGMA user_version").fetchone()[0] == latest


def test_newer_store_is_refused(tmp_path):
    path = str(tmp_path / "future.sqlite")
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {store.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(store.StoreError, match="newer"):
        store.Store(path)


def test_garbage_file_is_refused(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(store.StoreError, match="not a loggp study store"):
        store.Store(str(path))


def test_a_plan_entry_gets_one_row_only(tmp_path):
    s = store.Store(str(tmp_path / "s.sqlite"))
    _v1_run(s.conn)
    row = dict(s.runs()[0])
    del row["id"]
    with pytest.raises(sqlite3.IntegrityError):
        s.record(row)
    assert len(s.runs()) == 1
    row["status"] = "exploded"   # not a status: the whole insert is refused
    row["plan_id"] = 1
    with pytest.raises(sqlite3.IntegrityError):
        s.record(row)
    assert s.pending() == []
