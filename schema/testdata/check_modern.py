"""Check errtrail's modern ClickHouse DDL against a current engine (chdb).

Usage: check_modern.py RENDER.json   (from: go run ./schema/cmd/render -json)

Runs every migration twice (idempotent), inserts landing rows with an
explicit column list, and checks what each materialized view wrote, the
lookup query, ingest_progress and the order in which views run. Exits
non-zero on the first failure.
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
    print("chdb %s; DDL rendered for server %s" % (chdb.__version__, spec["Server"]))
    tmp = tempfile.mkdtemp(prefix="errtrail-chdb-")
    s = session.Session(tmp)

    def q(sql):
        return s.query(sql, "JSONEachRow").bytes().decode()

    def rows(sql):
        return [json.loads(l) for l in q(sql).splitlines() if l.strip()]

    print("engine version", rows("SELECT version() AS v")[0]["v"])
    db = "errtrail"
    for attempt in (1, 2):
        for m in spec["Migrations"]:
            for st in m["Statements"]:
                try:
                    s.query(st)
                except Exception as e:  # noqa: BLE001
                    check(False, "migration %03d run %d: %s\n%s" % (m["Version"], attempt, e, st))
                    return
        check(True, "all migrations ran (run %d)" % attempt)

    # Modern features are really there.
    types = {r["name"]: r for r in rows(
        "SELECT name, type, compression_codec FROM system.columns WHERE database='%s' AND table='errors'" % db)}
    check(types["agent"]["type"] == "LowCardinality(String)", "errors.agent is LowCardinality(String)")
    check("DoubleDelta" in types["observed_at"]["compression_codec"], "errors.observed_at has DoubleDelta codec")
    idx = [r["name"] for r in rows(
        "SELECT name FROM system.data_skipping_indices WHERE database='%s' AND table='errors'" % db)]
    check("idx_error_id" in idx and "idx_request_id" in idx, "errors has bloom_filter indexes: %s" % idx)
    ddl = rows("SELECT create_table_query AS c FROM system.tables WHERE database='%s' AND name='errors'" % db)[0]["c"]
    check("TTL" in ddl, "errors has a TTL")

    cols = [c["Name"] for c in spec["Landing"]]
    defaults = {
        "dead": 0, "event_id": "", "observed_at": "now()", "observed_at_ms": 0, "ingested_at": "now()",
        "kafka_topic": "t", "kafka_partition": 0, "kafka_offset": 0,
        "source_kind": "agent", "source_id": "", "agent": "", "endpoint": "", "caller": "", "method": "SendMessage",
        "attempt": 1, "http_request_id": "", "jsonrpc_id": "", "message_id": "", "task_id": "",
        "idempotency_key_hash": 0, "protocol": "a2a", "binding": "jsonrpc", "envelope": "jsonrpc_error",
        "http_status": 0, "grpc_status": "", "jsonrpc_code": 0, "code": "", "reason": "", "domain": "",
        "kind": "unknown", "typed": 0, "retryable": -1, "retryable_source": "", "retry_after_ms": -1,
        "retry_after_source": "", "limit_name": "", "scope": "", "error_id": "", "request_id": "",
        "message": "", "violation_fields": [], "violation_descriptions": [], "findings": [],
        "dl_reason": "", "dl_error": "", "raw": "", "source_version": "",
        "trace_id": "", "span_id": "", "origin": "event", "inferred": [], "kafka_index": 0,
    }

    def lit(name, v):
        if isinstance(v, list):
            return "[" + ", ".join(lit(name, x) for x in v) + "]"
        if isinstance(v, str):
            if v == "now()" or v.startswith("now() -"):
                return v
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return str(v)

    def insert(*rs):
        values = []
        for r in rs:
            row = dict(defaults)
            row.update(r)
            values.append("(" + ", ".join(lit(c, row[c]) for c in cols) + ")")
        s.query("INSERT INTO %s.landing (%s) VALUES %s" % (db, ", ".join(cols), ", ".join(values)))

    quota = dict(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7", origin="otlp",
                 inferred=["protocol"], kafka_index=2, event_id="e1", agent="a1", caller="c1", kind="quota", typed=1, http_status=429,
                 code="RESOURCE_EXHAUSTED", reason="RATE_LIMIT_EXCEEDED", limit_name="per_caller",
                 retry_after_ms=12000, error_id="E1", request_id="R1", kafka_offset=10,
                 observed_at="now() - 60", findings=["f1"], source_version="1.2.0")
    insert(quota,
           dict(quota, kafka_offset=11),  # the producer re-sent e1: same event, later offset
           dict(agent="a2", caller="c2", kind="internal", http_status=500, kafka_partition=1, kafka_offset=5,
                message_id="M3"),
           dict(dead=1, kafka_partition=1, kafka_offset=6, dl_reason="bad_json", dl_error="offset 3: want value",
                raw="{oops", agent=""))

    n = lambda sql: int(rows(sql)[0]["n"])  # noqa: E731
    # A current server already collapses duplicates inside one inserted block.
    check(n("SELECT count() AS n FROM %s.errors" % db) in (2, 3), "errors has the 3 rows (or 2: collapsed on insert)")
    check(n("SELECT count() AS n FROM %s.errors FINAL" % db) == 2, "errors FINAL collapses the re-sent event to 2 rows")
    check(n("SELECT count() AS n FROM %s.errors FINAL WHERE event_id = 'kafka:t/1/5'" % db) == 1,
          "an empty event_id becomes kafka:<topic>/<partition>/<offset>")
    check(n("SELECT count() AS n FROM %s.dead_letter WHERE dl_reason = 'bad_json' AND raw = '{oops'" % db) == 1,
          "dead_letter has the poison message")
    check(n("SELECT count() AS n FROM %s.error_lookup FINAL WHERE id = 'E1' AND id_kind = 'error_id'" % db) == 1,
          "error_lookup indexes error_id")

    check(n("SELECT count() AS n FROM %s.error_lookup FINAL WHERE id = '4bf92f3577b34da6a3ce929d0e0e4736' "
            "AND id_kind = 'trace_id'" % db) == 1, "error_lookup indexes trace_id")
    check(n("SELECT count() AS n FROM %s.error_lookup WHERE id_kind = 'trace_id' AND id = ''" % db) == 0,
          "error_lookup has no empty trace id")
    tr = rows("SELECT origin, trace_id, span_id, inferred, kafka_index FROM %s.error_traces FINAL WHERE event_id = 'e1'" % db)
    check(len(tr) == 1 and tr[0]["origin"] == "otlp" and tr[0]["span_id"] == "00f067aa0ba902b7"
          and tr[0]["inferred"] == ["protocol"] and int(tr[0]["kafka_index"]) == 2, "error_traces keeps e1's trace: %s" % tr)
    check(n("SELECT count() AS n FROM %s.error_traces FINAL" % db) == 2, "error_traces has the decoded events, not the dead letter")

    lookup = spec["Lookup"]

    def lookup_rows(i):
        return rows(lookup.replace("?", "'" + i + "'"))

    got = lookup_rows("E1")
    check(len(got) == 1 and got[0]["event_id"] == "e1" and got[0]["kind"] == "quota", "lookup by error_id: %d row(s)" % len(got))
    got = lookup_rows("R1")
    check(len(got) == 1 and got[0]["event_id"] == "e1", "lookup by request_id")
    got = lookup_rows("4bf92f3577b34da6a3ce929d0e0e4736")
    check(len(got) == 1 and got[0]["event_id"] == "e1", "lookup by trace_id")
    got = lookup_rows("M3")
    check(len(got) == 1 and got[0]["agent"] == "a2", "lookup by message_id")
    got = lookup_rows("kafka:t/1/5")
    check(len(got) == 1, "lookup by synthesized event_id")
    check(lookup_rows("nope") == [], "lookup of an unknown id is empty")

    r = rows("SELECT sum(n) AS n, sum(with_retry_after) AS w, sum(retry_after_ms_sum) AS s, sum(untyped_5xx) AS u "
             "FROM %s.errors_1m_v2 WHERE agent = 'a1' AND kind = 'quota' AND limit_name = 'per_caller'" % db)[0]
    check(int(r["n"]) == 2 and int(r["w"]) == 2 and int(r["s"]) == 24000 and int(r["u"]) == 0,
          "errors_1m_v2 counts a1 quota: %s" % r)
    check(n("SELECT sum(untyped_5xx) AS n FROM %s.errors_1m_v2 WHERE agent = 'a2'" % db) == 1, "errors_1m_v2 counts the untyped 500")
    check(n("SELECT count() AS n FROM %s.errors_1m" % db) == 0, "errors_1m gets nothing once 010 dropped its view")
    f1h = {x["finding"]: (int(x["n"]), int(x["b"]), x["ex"]) for x in rows(
        "SELECT finding, sum(n) AS n, sum(breaking) AS b, any(concat(example_event_id, '/', example_error_id)) AS ex "
        "FROM %s.findings_1h WHERE agent = 'a1' GROUP BY finding" % db)}
    check(f1h == {"": (2, 2, "e1/E1"), "f1": (2, 2, "e1/E1")}, "findings_1h counts a1's rule with its example: %s" % f1h)
    check(n("SELECT count() AS n FROM %s.errors FINAL WHERE source_version = '1.2.0'" % db) == 1,
          "errors keeps source_version (migration 008)")
    g = rows("SELECT code, source_version AS v, countMerge(n) AS n, uniqMerge(callers) AS c, argMaxMerge(example) AS ex, "
             "toString(minMerge(first_seen) <= maxMerge(last_seen)) AS ok "
             "FROM %s.error_groups WHERE agent = 'a1' GROUP BY agent, protocol, code, kind, method, source_version" % db)
    check(len(g) == 1 and g[0]["code"] == "RATE_LIMIT_EXCEEDED" and g[0]["v"] == "1.2.0" and int(g[0]["n"]) == 2
          and int(g[0]["c"]) == 1 and g[0]["ex"] == "E1" and g[0]["ok"] == "1",
          "error_groups: a1's group by its reason, version, count, callers and example: %s" % g)
    g = rows("SELECT code, argMaxMerge(example) AS ex FROM %s.error_groups WHERE agent = 'a2' "
             "GROUP BY agent, protocol, code, kind, method, source_version" % db)
    check(len(g) == 1 and g[0]["code"] == "" and g[0]["ex"] == "kafka:t/1/5",
          "error_groups: without an error_id the example is the event id: %s" % g)
    check(n("SELECT sum(n) AS n FROM %s.error_groups_1h WHERE agent = 'a1' AND code = 'RATE_LIMIT_EXCEEDED'" % db) == 2,
          "error_groups_1h counts a1's group per hour")
    out = {(x["outcome"], x["dl_reason"]): int(x["n"]) for x in rows(
        "SELECT outcome, dl_reason, sum(n) AS n FROM %s.outcomes_1m GROUP BY outcome, dl_reason" % db)}
    check(out == {("accepted", ""): 3, ("dead_letter", "bad_json"): 1}, "outcomes_1m: %s" % out)
    prog = {int(x["p"]): int(x["o"]) for x in rows(
        "SELECT kafka_partition AS p, max(max_offset) AS o FROM %s.ingest_progress WHERE kafka_topic = 't' GROUP BY p" % db)}
    check(prog == {0: 11, 1: 6}, "ingest_progress: %s" % prog)

    # A view that fails half way. A current server runs the views of one
    # block in no fixed order, so progress can be ahead of a failed view;
    # the ingester therefore retries the same batch with the same
    # insert_deduplication_token, and every view target must end with the
    # batch exactly once.
    s.query("CREATE TABLE %s.scratch (x UInt8) ENGINE = MergeTree ORDER BY x" % db)
    s.query("CREATE MATERIALIZED VIEW %s.mv8_fail TO %s.scratch AS SELECT throwIf(agent = 'boom') AS x FROM %s.landing" % (db, db, db))
    settings = " SETTINGS " + ", ".join("%s = %s" % (k, lit(k, v)) for k, v in sorted(spec["InsertSettings"].items()))
    check("insert_deduplication_token" in settings, "modern insert settings carry a dedup token")
    boom = [dict(event_id="b1", agent="boom", kafka_partition=2, kafka_offset=100, http_status=503, kind="overload"),
            dict(dead=1, agent="boom", kafka_partition=2, kafka_offset=101, dl_reason="too_large")]

    def insert_with(settings, rs):
        values = []
        for r in rs:
            row = dict(defaults)
            row.update(r)
            values.append("(" + ", ".join(lit(c, row[c]) for c in cols) + ")")
        s.query("INSERT INTO %s.landing (%s)%s VALUES %s" % (db, ", ".join(cols), settings, ", ".join(values)))

    try:
        insert_with(settings, boom)
        check(False, "the failing view failed the insert")
    except Exception:  # noqa: BLE001
        check(True, "the failing view failed the insert")
    s.query("DROP TABLE %s.mv8_fail" % db)
    for attempt in (1, 2):  # the retry, then a spurious second retry
        insert_with(settings, boom)
    check(n("SELECT count() AS n FROM %s.errors WHERE agent = 'boom'" % db) == 1, "retried batch: errors has it once")
    check(n("SELECT count() AS n FROM %s.dead_letter WHERE agent = 'boom'" % db) == 1, "retried batch: dead_letter has it once")
    check(n("SELECT sum(n) AS n FROM %s.errors_1m_v2 WHERE agent = 'boom'" % db) == 1, "retried batch: errors_1m_v2 counts it once")
    check(n("SELECT sum(n) AS n FROM %s.outcomes_1m WHERE dl_reason = 'too_large'" % db) == 1, "retried batch: outcomes_1m counts it once")
    check(n("SELECT count() AS n FROM %s.error_lookup WHERE id = 'b1'" % db) == 1, "retried batch: error_lookup has it once")
    check(n("SELECT sum(n) AS n FROM %s.findings_1h WHERE agent = 'boom'" % db) == 1, "retried batch: findings_1h counts it once")
    check(n("SELECT countMerge(n) AS n FROM %s.error_groups WHERE agent = 'boom'" % db) == 1, "retried batch: error_groups counts it once")
    check(n("SELECT sum(n) AS n FROM %s.error_groups_1h WHERE agent = 'boom'" % db) == 1, "retried batch: error_groups_1h counts it once")
    check(n("SELECT max(max_offset) AS n FROM %s.ingest_progress WHERE kafka_partition = 2" % db) == 101, "retried batch: progress 101")

    # Merges keep the rollups right.
    for t in ("errors", "errors_1m_v2", "outcomes_1m", "ingest_progress", "error_lookup", "findings_1h"):
        s.query("OPTIMIZE TABLE %s.%s FINAL" % (db, t))
    check(n("SELECT count() AS n FROM %s.errors" % db) == 3, "errors after OPTIMIZE FINAL: 2 events + boom")
    check(n("SELECT count() AS n FROM %s.ingest_progress" % db) == 3, "ingest_progress after merge: one row per partition (3)")
    check(n("SELECT sum(n) AS n FROM %s.errors_1m_v2" % db) == 4, "errors_1m_v2 keeps its sums after merge")
    check(n("SELECT count() AS n FROM %s.errors_1m_v2 WHERE agent = 'a1'" % db) == 1, "errors_1m_v2: one row per key after merge")
    r = rows("SELECT sum(n) AS n, count() AS c, any(example_event_id) AS e, any(example_error_id) AS i "
             "FROM %s.findings_1h WHERE agent = 'a1' AND finding = 'f1'" % db)[0]
    check(int(r["n"]) == 2 and int(r["c"]) == 1 and (r["e"], r["i"]) == ("e1", "E1"),
          "findings_1h after merge: one row per key, sums and example kept: %s" % r)

    s.close()
    upgrade(spec, lit, defaults, cols)


def upgrade(spec, lit, defaults, cols):
    """Migration 010 on a database an older errtrail left: rows before and
    after it, summed over errors_1m and errors_1m_v2, count what errors holds
    per agent, minute and kind; the old table gets nothing after it."""
    tmp = tempfile.mkdtemp(prefix="errtrail-chdb-upgrade-")
    s = session.Session(tmp)
    db = "errtrail"

    def rows(sql):
        return [json.loads(l) for l in s.query(sql, "JSONEachRow").bytes().decode().splitlines() if l.strip()]

    def run(pred):
        for m in spec["Migrations"]:
            if pred(m["Version"]):
                for st in m["Statements"]:
                    s.query(st)

    offset = [0]

    def insert(agent, caller, kind, ago):
        offset[0] += 1
        row = dict(defaults, event_id="u%d" % offset[0], kafka_offset=offset[0], agent=agent, caller=caller,
                   kind=kind, observed_at="now() - %d" % ago)
        # The columns landing has now: an older ingester names those of
        # its own migrations only (008 and 009 add columns).
        have = {r["name"] for r in rows("SELECT name FROM system.columns WHERE database='%s' AND table='landing'" % db)}
        now_cols = [c for c in cols if c in have]
        s.query("INSERT INTO %s.landing (%s) VALUES (%s)" % (db, ", ".join(now_cols), ", ".join(lit(c, row[c]) for c in now_cols)))

    run(lambda v: v <= 7)
    for ago in (300, 240, 180):
        insert("a", "c1", "quota", ago)
        insert("a", "c2", "quota", ago)
        insert("b", "c1", "internal", ago)
    run(lambda v: v > 7)
    views = sorted(r["name"] for r in rows("SELECT name FROM system.tables WHERE database='%s' AND engine = 'MaterializedView' AND name LIKE 'mv4%%'" % db))
    check(views == ["mv4_errors_1m_v2"], "upgrade: only mv4_errors_1m_v2 after 010: %s" % views)
    for ago in (290, 230, 170, 60):  # late replies for the minutes counted before, and a new minute
        insert("a", "c3", "quota", ago)
        insert("b", "c2", "internal", ago)
    key = lambda r: (r["agent"], r["m"], r["kind"])  # noqa: E731
    truth = {key(r): int(r["n"]) for r in rows(
        "SELECT agent, toString(toStartOfMinute(observed_at)) AS m, kind, uniqExact(event_id) AS n FROM %s.errors GROUP BY agent, m, kind" % db)}
    both = {key(r): int(r["n"]) for r in rows(
        "SELECT agent, toString(minute) AS m, kind, sum(n) AS n FROM (SELECT agent, minute, kind, n FROM %s.errors_1m "
        "UNION ALL SELECT agent, minute, kind, n FROM %s.errors_1m_v2) GROUP BY agent, m, kind" % (db, db))}
    check(both == truth and sum(truth.values()) == 17, "upgrade: errors_1m + errors_1m_v2 count what errors holds: %s vs %s" % (both, truth))
    old = int(rows("SELECT sum(n) AS n FROM %s.errors_1m" % db)[0]["n"])
    new = int(rows("SELECT sum(n) AS n FROM %s.errors_1m_v2" % db)[0]["n"])
    check((old, new) == (9, 8), "upgrade: errors_1m has the 9 replies before, errors_1m_v2 the 8 after: %d, %d" % (old, new))
    s.close()


if __name__ == "__main__":
    main()
    # The exit status is decided here, after main returned by whatever path
    # (a failed migration returns early): any failed check exits 1.
    if failures:
        print("%d check(s) failed" % failures)
        sys.exit(1)
    print("all checks passed")
