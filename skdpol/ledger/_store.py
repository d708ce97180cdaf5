"""The ledger's SQLite file: schema, connections, and the check-and-append.

Why SQLite (standard library): several processes (``GridSearchCV`` workers,
a notebook and a batch job) append to one file, and a writer may be killed
at any moment. In WAL mode with ``synchronous=FULL`` a transaction is on
disk entirely or not at all, readers never block the writer, and a killed
writer's half-done transaction is rolled back by the next connection. Every
append runs in one ``BEGIN IMMEDIATE`` transaction, which takes the write
lock *before* reading: the budget check and the insert see the same ledger,
so two processes cannot both pass a check that only one of them fits in.

Branches. A stream's releases are cumulative (its latest event covers all
of its earlier releases), so only the *tip* of a branch is charged. An
entry continues its parent (the entry the estimator's previous release
wrote) when no other entry has continued that parent yet; otherwise it is a
fork -- a second continuation of one checkpoint (a pickle restored twice,
a deep copy) -- and starts a branch of its own, charged in full. The fork's
event also covers the shared releases before the checkpoint, so they are
counted twice: conservative, never under-charged.

The budget. The ``budgets`` table holds every budget the file was given,
oldest first, with when and by whom; the latest row is the budget in
force, for every process that opens the file. New files are format
``skdpol-ledger-2``, which skdpol versions that did not know of stored
budgets refuse to open (they would not enforce the budget). Format-1 files
(written by those versions) are still read and written, keep format 1 while
they hold no budget, and become format 2 when one is stored.
"""

import datetime
import getpass
import json
import os
import socket
import sqlite3
import uuid
from urllib.parse import quote

FORMAT = "skdpol-ledger-2"
# format 1: written before budgets were kept in the file (still read and written)
FORMATS = ("skdpol-ledger-1", FORMAT)
# seconds a writer waits for another process's transaction before failing
TIMEOUT = 60.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    branch TEXT NOT NULL,
    parent INTEGER,
    source TEXT NOT NULL,
    params TEXT NOT NULL,
    event TEXT NOT NULL,
    delta REAL NOT NULL,
    epsilon REAL,
    releases INTEGER NOT NULL,
    inferred TEXT NOT NULL,
    seeded INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_branch ON entries (branch, id);
CREATE INDEX IF NOT EXISTS entries_parent ON entries (parent);
CREATE TABLE IF NOT EXISTS budgets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    who TEXT NOT NULL,
    note TEXT NOT NULL
);
"""

_COLUMNS = ("id", "time", "branch", "parent", "source", "params", "event", "delta",
            "epsilon", "releases", "inferred", "seeded")


class NotALedgerError(ValueError):
    """The file exists but is not a skdpol ledger."""


class EmptyLedger(Exception):
    """The file exists but holds no table yet (its creator has not committed)."""


def connect(path, *, create=True):
    """A connection in autocommit mode (transactions are explicit).

    ``create=False`` opens an existing file and never creates one (nor its tables).
    """
    if create:
        conn = sqlite3.connect(path, timeout=TIMEOUT, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    conn.execute(statement)
            # a new file is format 2; an existing one keeps its format
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise
    else:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no ledger at {path}")
        conn = sqlite3.connect(f"file:{quote(path)}?mode=rw", uri=True, timeout=TIMEOUT,
                               isolation_level=None)
    try:
        # one read transaction, so both queries see the same snapshot: read
        # apart, a creator committing in between made a new ledger look like
        # a file with tables but no meta (NotALedgerError in a GridSearchCV
        # worker racing another worker's first write)
        conn.execute("BEGIN")
        try:
            # a file another process has just created and not yet given its tables
            being_made = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
            row = None if being_made else conn.execute(
                "SELECT value FROM meta WHERE key = 'format'").fetchone()
        finally:
            conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise NotALedgerError(f"{path} is not a skdpol ledger ({exc}).") from None
    if being_made:
        conn.close()
        raise EmptyLedger(path)
    if row is None or row[0] not in FORMATS:
        conn.close()
        raise NotALedgerError(f"{path} is not a skdpol ledger (format {row!r}).")
    return conn


def read_rows(conn):
    """Every entry as a dict, oldest first."""
    rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM entries ORDER BY id").fetchall()
    return [dict(zip(_COLUMNS, r)) for r in rows]


def tips(conn):
    """The charged entries: the latest of every branch."""
    rows = conn.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM entries WHERE id IN "
        "(SELECT MAX(id) FROM entries GROUP BY branch) ORDER BY id").fetchall()
    return [dict(zip(_COLUMNS, r)) for r in rows]


def resolve_branch(conn, parent):
    """(branch, parent) of a new entry continuing ``parent`` (an entry id or None).

    A new stream, or a parent this file does not hold (the ledger was
    replaced), gets a fresh branch; a parent someone already continued is
    forked (see the module docstring).
    """
    if parent is not None:
        row = conn.execute("SELECT branch FROM entries WHERE id = ?", (parent,)).fetchone()
        if row is not None:
            taken = conn.execute("SELECT 1 FROM entries WHERE parent = ? AND branch = ?",
                                 (parent, row[0])).fetchone()
            if taken is None:
                return row[0], parent
            return uuid.uuid4().hex, parent  # a second continuation: a fork
    return uuid.uuid4().hex, None


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def insert(conn, entry):
    """Insert one entry (a dict of the columns but ``id``); returns its id."""
    names = [c for c in _COLUMNS if c != "id"]
    values = [entry[c] if c != "inferred" else json.dumps(list(entry[c])) for c in names]
    cur = conn.execute(
        f"INSERT INTO entries ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        values)
    return cur.lastrowid


_BUDGET_COLUMNS = ("id", "time", "epsilon", "delta", "who", "note")


def _has_budgets(conn):
    # a format-1 file opened read-only has no budgets table (created on the first write)
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                        "AND name = 'budgets'").fetchone() is not None


def budget_history(conn):
    """Every budget the file was given, oldest first, as dicts."""
    if not _has_budgets(conn):
        return []
    rows = conn.execute(f"SELECT {', '.join(_BUDGET_COLUMNS)} FROM budgets ORDER BY id")
    return [dict(zip(_BUDGET_COLUMNS, r)) for r in rows.fetchall()]


def read_budget(conn):
    """The budget in force, (epsilon, delta) as stored, or None."""
    if not _has_budgets(conn):
        return None
    row = conn.execute("SELECT epsilon, delta FROM budgets ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else (row[0], row[1])


def who():
    """user@host and process id, for the budget history."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment (a container)
        user = f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"
    return f"{user}@{socket.gethostname()} (pid {os.getpid()})"


def write_budget(conn, epsilon, delta, note):
    """Append a budget (in force from now), inside the caller's write transaction.

    The file becomes format 2 (older skdpol refuses it rather than ignore its budget).
    """
    row = dict(time=now(), epsilon=float(epsilon), delta=float(delta), who=who(),
               note=str(note))
    names = _BUDGET_COLUMNS[1:]
    cur = conn.execute(f"INSERT INTO budgets ({', '.join(names)}) VALUES "
                       f"({', '.join('?' * len(names))})", [row[c] for c in names])
    conn.execute("UPDATE meta SET value = ? WHERE key = 'format'", (FORMAT,))
    row["id"] = cur.lastrowid
    return row
