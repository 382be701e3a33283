"""SQLite store of a study: the plan, one row per finished run, study facts.

One file, results.sqlite, in the study's results folder. Every change is a
single transaction, so a run killed at any moment leaves either the whole row
or nothing. The schema is versioned with PRAGMA user_version; MIGRATIONS is
the ordered list of steps from an empty file to the current schema.
"""
import json
import sqlite3

from loggp.knobs.vocabulary import FIELDS

DB_NAME = "results.sqlite"

KNOB_COLUMNS = FIELDS

MIGRATIONS = [
    # 1: the first schema.
    """
    CREATE TABLE study (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE plan (
        id INTEGER PRIMARY KEY,
        round INTEGER NOT NULL,
        position INTEGER NOT NULL,
        setting_key TEXT NOT NULL,
        benchmark TEXT NOT NULL,
        np INTEGER NOT NULL,
        class TEXT,
        sweep TEXT NOT NULL,
        knobs TEXT NOT NULL,
        UNIQUE (round, setting_key)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        plan_id INTEGER NOT NULL UNIQUE REFERENCES plan(id),
        round INTEGER NOT NULL,
        benchmark TEXT NOT NULL,
        kind TEXT NOT NULL,
        class TEXT,
        np INTEGER NOT NULL,
        sweep TEXT NOT NULL,
        knobs TEXT NOT NULL,
        o_s_ns REAL NOT NULL, o_r_ns REAL NOT NULL, g_ns REAL NOT NULL,
        G_ns_per_byte REAL NOT NULL, L_ns REAL NOT NULL,
        command TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        wall_seconds REAL NOT NULL,
        runtime_seconds REAL,
        verified INTEGER,
        exit_status INTEGER,
        status TEXT NOT NULL CHECK (status IN ('ok', 'unverified', 'failed', 'timeout')),
        host TEXT,
        mpi_version TEXT,
        loggp_version TEXT,
        profile TEXT,
        stdout_path TEXT,
        stderr_path TEXT
    );
    """,
    # 2: say why a run failed; look runs up by benchmark and sweep quickly.
    """
    ALTER TABLE runs ADD COLUMN error TEXT;
    CREATE INDEX runs_by_setting ON runs (benchmark, np, sweep);
    """,
    # 3: which libmpi the ranks ran on (the ABI swap's decision); NULL in older rows.
    """
    ALTER TABLE runs ADD COLUMN libmpi TEXT;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    pass


def connect(path, migrate_to=None):
    """Opens (creating if needed) and migrates the store to migrate_to
    (default: the latest version)."""
    migrate_to = SCHEMA_VERSION if migrate_to is None else migrate_to
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as e:
        conn.close()
        raise StoreError(f"{path} is not a loggp study store: {e}") from None
    if version > SCHEMA_VERSION:
        conn.close()
        raise StoreError(f"{path} has schema version {version}, newer than this loggp "
                         f"understands ({SCHEMA_VERSION}); use a newer loggp")
    for target in range(version + 1, migrate_to + 1):
        # DDL and the version bump commit together: a kill leaves the old version.
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(MIGRATIONS[target - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {target}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise
    return conn


def _statements(script):
    return [s.strip() for s in script.split(";") if s.strip()]


def schema_version(conn):
    return conn.execute("PRAGMA user_version").fetchone()[0]


class Store:
    def __init__(self, path):
        self.path = path
        self.conn = connect(path)

    def close(self):
        self.conn.close()

    def facts(self):
        return {r["key"]: r["value"] for r in self.conn.execute("SELECT key, value FROM study")}

    def set_facts(self, facts):
        with _transaction(self.conn):
            for k, v in facts.items():
                self.conn.execute("INSERT OR REPLACE INTO study (key, value) VALUES (?, ?)", (k, v))

    def initialise(self, study, facts, plan_digest=None):
        """Stores the study and its plan once; on resume checks the study file
        plans the runs the results came from. Returns "new", "resumed" (the same
        file) or "edited" (another text with the same plan: comments, layout)."""
        plan_digest = plan_digest or study.plan_digest()
        existing = self.facts()
        if existing:
            if existing.get("digest") == study.digest():
                return "resumed"
            if existing.get("plan_digest") == plan_digest:
                return "edited"
            if "plan_digest" not in existing:
                raise StoreError(
                    f"{self.path} holds results of another text of the study file (stored from "
                    f"{existing.get('study_path')}), and this older folder did not record its plan, so a "
                    f"comment cannot be told from a change; restore the original file or use a new results folder")
            raise StoreError(
                f"{self.path} holds results of a different study: {study.path} now plans other runs "
                f"(benchmarks, classes, sweep, repetitions, order or launch) than the file they were stored "
                f"from ({existing.get('study_path')}); use a new results folder or restore the original file")
        with _transaction(self.conn):
            rows = dict(facts, digest=study.digest(), plan_digest=plan_digest, study_text=study.text,
                        study_path=study.path, name=study.name)
            for k, v in rows.items():
                self.conn.execute("INSERT INTO study (key, value) VALUES (?, ?)", (k, str(v)))
            for rnd, pos, s in study.plan():
                self.conn.execute(
                    "INSERT INTO plan (round, position, setting_key, benchmark, np, class, sweep, knobs)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (rnd, pos, s.key(), s.benchmark, s.np, s.klass, s.sweep, json.dumps(dict(s.knobs))))
        return "new"

    def pending(self):
        return [dict(r) for r in self.conn.execute(
            "SELECT plan.* FROM plan LEFT JOIN runs ON runs.plan_id = plan.id "
            "WHERE runs.id IS NULL ORDER BY plan.round, plan.position")]

    def next_round(self):
        """The number the next added round gets."""
        return self.conn.execute("SELECT COALESCE(MAX(round), -1) + 1 FROM plan").fetchone()[0]

    def add_round(self, rows):
        """Plans one more round: rows of (round, position, setting key, benchmark, np, class,
        sweep, knobs as JSON), committed together."""
        with _transaction(self.conn):
            for row in rows:
                self.conn.execute(
                    "INSERT INTO plan (round, position, setting_key, benchmark, np, class, sweep, knobs)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)

    def plan_entry(self, plan_id):
        row = self.conn.execute("SELECT * FROM plan WHERE id = ?", (plan_id,)).fetchone()
        return dict(row) if row else None

    def plan_size(self):
        return self.conn.execute("SELECT COUNT(*) FROM plan").fetchone()[0]

    def record(self, row):
        columns = list(row)
        with _transaction(self.conn):
            self.conn.execute(
                f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                [row[c] for c in columns])

    def runs(self):
        return [dict(r) for r in self.conn.execute("SELECT * FROM runs ORDER BY id")]

    def mean_wall_by_benchmark(self):
        return {r[0]: r[1] for r in self.conn.execute(
            "SELECT benchmark, AVG(wall_seconds) FROM runs GROUP BY benchmark")}


class _transaction:
    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, value, tb):
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")
        return False
