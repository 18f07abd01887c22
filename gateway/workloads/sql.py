"""Text-to-SQL tasks over a schema whose tables and columns are real standard-library identifiers:
`logging.LogRecord` attributes, `tarfile.TarInfo` slots (with their own descriptions as comments),
`zipfile.ZipInfo` slots, `http.HTTPStatus` and `urllib.parse.ParseResult` fields. The references are
the queries a careful model writes; every one runs on SQLite against the schema (tests check that)."""

from __future__ import annotations

import http
import logging
import random
import tarfile
import urllib.parse
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

from gateway.workloads.corpus import CODE_MODULES
from gateway.workloads.task import Task, chat_body, fenced

_SQL_TYPES = {int: "INTEGER", float: "REAL", str: "TEXT", bytes: "BLOB"}
# Hosts named in the standard library's own docs and sources.
_HOSTS = ("www.python.org", "docs.python.org", "bugs.python.org", "pypi.org", "github.com", "peps.python.org")


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[tuple[str, str, str], ...]  # (name, SQL type, comment)

    def ddl(self) -> str:
        lines = []
        for i, (name, sql_type, comment) in enumerate(self.columns):
            comma = "," if i < len(self.columns) - 1 else ""
            lines.append(f"  {name} {sql_type}{comma}" + (f"  -- {comment}" if comment else ""))
        return f"CREATE TABLE {self.name} (\n" + "\n".join(lines) + "\n);"


def _log_table() -> Table:
    record = logging.makeLogRecord({"name": "x", "levelno": 20, "funcName": "f", "msg": "m"})
    skip = {"msg", "args", "exc_info", "exc_text", "stack_info"}
    cols = [("id", "INTEGER PRIMARY KEY", "")]
    for key, value in record.__dict__.items():
        if key not in skip:
            cols.append((key, _SQL_TYPES.get(type(value), "TEXT"), ""))
    cols.append(("message", "TEXT", "the formatted message"))
    return Table("log_records", tuple(cols))


def _tar_table() -> Table:
    slots = tarfile.TarInfo.__slots__
    assert isinstance(slots, dict)
    types = {"name": "TEXT", "linkname": "TEXT", "uname": "TEXT", "gname": "TEXT", "type": "TEXT"}
    cols = [("archive", "TEXT", "path of the tar archive")]
    for key, doc in slots.items():
        if key.startswith("_") or key in ("tarfile", "pax_headers", "sparse"):
            continue
        cols.append((key, types.get(key, "INTEGER"), str(doc).split(". ")[0].rstrip(".")))
    return Table("tar_members", tuple(cols))


def _zip_table() -> Table:
    types = {"orig_filename": "TEXT", "filename": "TEXT", "date_time": "TEXT", "comment": "BLOB", "extra": "BLOB"}
    cols = [("archive", "TEXT", "path of the zip archive")]
    cols += [(k, types.get(k, "INTEGER"), "") for k in zipfile.ZipInfo.__slots__ if not k.startswith("_")]
    return Table("zip_entries", tuple(cols))


def _status_table() -> Table:
    return Table("http_status", (("code", "INTEGER PRIMARY KEY", ""), ("phrase", "TEXT", ""),
                                 ("description", "TEXT", "")))


def _request_table() -> Table:
    cols = [("id", "INTEGER PRIMARY KEY", ""), ("created", "REAL", "unix time")]
    cols += [(f, "TEXT", "") for f in urllib.parse.ParseResult._fields]
    cols += [("status", "INTEGER", "REFERENCES http_status(code)"), ("bytes_sent", "INTEGER", "")]
    return Table("requests", tuple(cols))


def schema() -> dict[str, Table]:
    tables = [_log_table(), _tar_table(), _zip_table(), _status_table(), _request_table()]
    return {t.name: t for t in tables}


Query = tuple[list[str], str, str]  # (tables, question, sql)


def _q_log_counts(rng: random.Random) -> Query:
    col = rng.choice(["levelname", "module", "funcName", "threadName", "processName", "name"])
    return (["log_records"], f"How many log records are there for each {col}? Most frequent first.",
            f"SELECT {col}, COUNT(*) AS record_count\nFROM log_records\nGROUP BY {col}\nORDER BY record_count DESC;")


def _q_log_errors(rng: random.Random) -> Query:
    module = rng.choice(CODE_MODULES).split("/")[-1].replace("__init__", "html")
    limit = rng.choice([10, 20, 50])
    return (["log_records"],
            f"Show the {limit} most recent ERROR or CRITICAL records logged from the {module} module, with the "
            "function name, line number and message.",
            "SELECT created, funcName, lineno, message\nFROM log_records\n"
            f"WHERE module = '{module}' AND levelno >= {logging.ERROR}\nORDER BY created DESC\nLIMIT {limit};")


def _q_log_window(rng: random.Random) -> Query:
    level = rng.choice(["WARNING", "ERROR"])
    return (["log_records"], f"For each module, which function logged the most {level} records?",
            "SELECT module, funcName, hits\nFROM (\n  SELECT module, funcName, COUNT(*) AS hits,\n"
            "         ROW_NUMBER() OVER (PARTITION BY module ORDER BY COUNT(*) DESC) AS rn\n"
            f"  FROM log_records\n  WHERE levelname = '{level}'\n  GROUP BY module, funcName\n) AS ranked\n"
            "WHERE rn = 1\nORDER BY hits DESC;")


def _q_tar_largest(rng: random.Random) -> Query:
    limit = rng.choice([5, 10, 25])
    kind, code = rng.choice([("regular files", tarfile.REGTYPE), ("symbolic links", tarfile.SYMTYPE),
                             ("directories", tarfile.DIRTYPE)])
    return (["tar_members"],
            f"List the archive, name and size of the {limit} largest {kind} (type '{code.decode()}') across all "
            "archives, owned by uid 0.",
            f"SELECT archive, name, size\nFROM tar_members\nWHERE type = '{code.decode()}' AND uid = 0\n"
            f"ORDER BY size DESC\nLIMIT {limit};")


def _q_tar_owner(rng: random.Random) -> Query:
    return (["tar_members"], "For every archive, give the number of members and total size per owner (uname).",
            "SELECT archive, uname, COUNT(*) AS members, SUM(size) AS total_size\nFROM tar_members\n"
            "GROUP BY archive, uname\nORDER BY archive, total_size DESC;")


def _q_zip_ratio(rng: random.Random) -> Query:
    method = rng.choice([("ZIP_DEFLATED", zipfile.ZIP_DEFLATED), ("ZIP_BZIP2", zipfile.ZIP_BZIP2),
                         ("ZIP_LZMA", zipfile.ZIP_LZMA)])
    return (["zip_entries"],
            f"What is the overall compression ratio (compressed over uncompressed bytes) of the entries stored with "
            f"{method[0]} (compress_type {method[1]}) in each archive? Skip empty archives.",
            "SELECT archive, SUM(compress_size) * 1.0 / SUM(file_size) AS ratio\nFROM zip_entries\n"
            f"WHERE compress_type = {method[1]}\nGROUP BY archive\nHAVING SUM(file_size) > 0\nORDER BY ratio;")


def _q_status_join(rng: random.Random) -> Query:
    host = rng.choice(_HOSTS)
    return (["http_status", "requests"],
            f"For requests to {host}, count the responses per status phrase, most common first.",
            "SELECT s.phrase, COUNT(*) AS responses\nFROM requests AS r\nJOIN http_status AS s ON s.code = r.status\n"
            f"WHERE r.netloc = '{host}'\nGROUP BY s.phrase\nORDER BY responses DESC;")


def _q_status_range(rng: random.Random) -> Query:
    low = rng.choice([400, 500])
    status = rng.choice([s for s in http.HTTPStatus if low <= s.value < low + 100])
    return (["http_status", "requests"],
            f"Which paths returned {status.value} {status.phrase} most often, and how many bytes did they send in "
            "total? Top 10.",
            "SELECT r.path, COUNT(*) AS hits, SUM(r.bytes_sent) AS total_bytes\nFROM requests AS r\n"
            f"WHERE r.status = {status.value}\nGROUP BY r.path\nORDER BY hits DESC\nLIMIT 10;")


def _q_errors_by_host(rng: random.Random) -> Query:
    low = rng.choice([400, 500])
    return (["http_status", "requests"],
            f"Per host (netloc), what share of requests ended with a {low // 100}xx status? Include the most "
            "frequent such phrase.",
            f"WITH failed AS (\n  SELECT r.netloc, s.phrase\n  FROM requests AS r\n"
            f"  JOIN http_status AS s ON s.code = r.status\n  WHERE r.status BETWEEN {low} AND {low + 99}\n)\n"
            "SELECT t.netloc,\n       (SELECT COUNT(*) FROM failed AS f WHERE f.netloc = t.netloc) * 1.0 / COUNT(*) "
            "AS failure_share,\n       (SELECT f.phrase FROM failed AS f WHERE f.netloc = t.netloc\n"
            "        GROUP BY f.phrase ORDER BY COUNT(*) DESC LIMIT 1) AS top_phrase\n"
            "FROM requests AS t\nGROUP BY t.netloc\nORDER BY failure_share DESC;")


QUERIES: tuple[Callable[[random.Random], Query], ...] = (
    _q_log_counts, _q_log_errors, _q_log_window, _q_tar_largest, _q_tar_owner, _q_zip_ratio, _q_status_join,
    _q_status_range, _q_errors_by_host,
)


def sql_task(rng: random.Random) -> Task:
    tables = schema()
    names, question, sql = rng.choice(QUERIES)(rng)
    shown = list(names)
    extra_tables = [n for n in tables if n not in shown]
    shown += rng.sample(extra_tables, rng.randint(0, 2))
    ddl = "\n\n".join(tables[n].ddl() for n in sorted(shown))
    reference = fenced(sql, "sql")
    user = f"Given this SQLite schema:\n\n{ddl}\n\nWrite a SQL query for: {question}\nReturn only the SQL."
    messages = [{"role": "system", "content": "You translate questions into SQL for SQLite."},
                {"role": "user", "content": user}]
    body = chat_body(messages, reference, rng.choice([0.0, 0.0, 0.2]))
    return Task("sql", "/v1/chat/completions", body, reference)
