"""Run every ClickHouse query of errtrail's dashboards on a current engine (chdb).

Usage: check_chdb.py RENDER.json QUERIES.json
  RENDER.json  from: go run ./schema/cmd/render -server 25.8 -json
  QUERIES.json from: go run ./dashboards/cmd/gen -queries -database errtrail

Creates the modern schema, inserts the same kind of landing rows as
dashboards/sql_test.go (which runs the same queries on the local 18.16
server), then runs each expanded query. With the "plain" values every query
must return rows; with the "quoted" values every query must run, and the
lookups must return exactly the row with the quoted id (no injection).
Exits non-zero when any check fails.
"""
import json
import sys
import tempfile

import chdb
from chdb import session

failures = 0


def check(cond, what):
    global failures
    if cond:
        print("ok   " + what)
    else:
        failures += 1
        print("FAIL " + what)


def main():
    spec = json.load(open(sys.argv[1]))
    queries = json.load(open(sys.argv[2]))
    s = session.Session(tempfile.mkdtemp(prefix="errtrail-dash-chdb-"))

    def rows(sql):
        out = s.query(sql, "JSONEachRow").bytes().decode()
        return [json.loads(l) for l in out.splitlines() if l.strip()]

    print("chdb %s, engine %s; DDL rendered for server %s"
          % (chdb.__version__, rows("SELECT version() AS v")[0]["v"], spec["Server"]))
    for m in spec["Migrations"]:
        for st in m["Statements"]:
            try:
                s.query(st)
            except Exception as e:  # noqa: BLE001
                check(False, "migration %03d: %s\n%s" % (m["Version"], e, st))
                return
    check(True, "all migrations ran")

    cols = [c["Name"] for c in spec["Landing"]]
    defaults = {c["Name"]: ([] if c["Type"].startswith("Array") else
                            "" if c["Type"] == "String" else 0) for c in spec["Landing"]}
    defaults.update({"observed_at": "now() - 600", "ingested_at": "now() - 300",
                     "kafka_topic": "errtrail.replies", "source_kind": "agent", "attempt": 1,
                     "retryable": -1, "retry_after_ms": -1})

    def lit(v):
        if isinstance(v, list):
            return "[" + ", ".join(lit(x) for x in v) + "]"
        if isinstance(v, str):
            if v.startswith("now()"):
                return v
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return str(v)

    # The rows of dashboards/sql_test.go testRows.
    test_rows = [
        dict(agent="agent-a", caller="c1", kind="overload", http_status=503, typed=1,
             error_id="err-0001", request_id="req-0001", event_id="e1"),
        dict(agent="agent-a", caller="c2", kind="quota", http_status=429, typed=1, limit_name="rpm",
             retry_after_ms=2000, findings=["retry_after_header_missing"], event_id="e2"),
        dict(agent="agent-a", caller="c2", kind="quota", http_status=429, typed=1, attempt=2,
             findings=["retry_delay_missing"], event_id="e3"),
        dict(agent="agent-a", caller="o'brien", kind="unknown", http_status=502, source_kind="gateway",
             findings=["status_body_mismatch", "untyped_5xx"], error_id="it's", event_id="e4"),
        dict(agent="agent-b", caller="c1", kind="internal", http_status=500, request_id="x' OR '1'='1",
             event_id="e5"),
        dict(dead=1, dl_reason="invalid_json", dl_error="offset 3: unexpected end", raw='{"v":', event_id=""),
    ]
    values = []
    for i, r in enumerate(test_rows):
        row = dict(defaults)
        row.update(r)
        row["kafka_offset"] = i + 1
        values.append("(" + ", ".join(lit(row[c]) for c in cols) + ")")
    db = "errtrail"  # scripts/check-dashboard-sql expands the queries with -database errtrail
    s.query("INSERT INTO %s.landing (%s) VALUES %s" % (db, ", ".join(cols), ", ".join(values)))
    # The incidents of dashboards/sql_test.go: one ended overload of agent-a
    # written twice (open, then ended) and one open runaway.
    s.query("INSERT INTO %s.incidents (kind, agent, caller, reason, started_at, last_seen_at, ended_at, version) VALUES "
            "('overload', 'agent-a', '', '', now() - 1200, now() - 1100, toDateTime(0), 1), "
            "('overload', 'agent-a', '', '', now() - 1200, now() - 1000, now() - 900, 2), "
            "('runaway', 'agent-a', 'c2', '', now() - 600, now() - 60, toDateTime(0), 3)" % db)

    sets = {}
    for q in queries:
        sets.setdefault(q["Values"], {})
    for q in queries:
        name = "%s / %s / %s" % (q["Dashboard"], q["Where"], q["Values"])
        try:
            got = rows(q["SQL"])
        except Exception as e:  # noqa: BLE001
            check(False, "%s: %s\n%s" % (name, str(e).strip().splitlines()[0], q["SQL"]))
            continue
        if q["Values"] == "plain" and not got:
            check(False, "%s: no rows with the plain values\n%s" % (name, q["SQL"]))
            continue
        if q["Dashboard"] == "errtrail-lookup":
            col = "request_id" if "request_id" in q["Where"] else "error_id"
            want = {"plain": {"error_id": "err-0001", "request_id": "req-0001"},
                    "quoted": {"error_id": "it's", "request_id": "x' OR '1'='1"}}[q["Values"]][col]
            if len(got) != 1 or got[0][col] != want:
                check(False, "%s: want exactly the row with %s %r, got %d rows" % (name, col, want, len(got)))
                continue
        check(True, "%s (%d rows)" % (name, len(got)))

    print("%d passed, %d failed" % (len(queries) + 1 - failures, failures))


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
