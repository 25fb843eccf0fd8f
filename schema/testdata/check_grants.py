"""Check the SQL of docs/operations.md's "The alerter's ClickHouse user"
against a current ClickHouse parser (chdb).

Usage: check_grants.py docs/operations.md

chdb runs clickhouse-local, which has no writable user directory, so
CREATE USER and GRANT cannot be executed there: each statement is parsed
(formatQuery), which checks its grammar and the privilege names. The
statements the section promises must be there. Exits non-zero on a
failure; a deliberately broken statement must fail (self-check).
"""
import re
import sys
import tempfile

from chdb import session

failures = 0


def check(cond, what):
    global failures
    if cond:
        print("ok   " + what)
    else:
        failures += 1
        print("FAIL " + what)


def statements(doc):
    sec = doc.split("## The alerter's ClickHouse user", 1)
    if len(sec) != 2:
        return []
    m = re.search(r"```sql\n(.*?)```", sec[1].split("\n## ", 1)[0], re.S)
    if not m:
        return []
    body = "\n".join(l for l in m.group(1).splitlines() if not l.strip().startswith("--"))
    return [s.strip() for s in body.split(";") if s.strip()]


def main():
    sts = statements(open(sys.argv[1]).read())
    check(len(sts) > 0, "the section has a sql block (%d statements)" % len(sts))
    s = session.Session(tempfile.mkdtemp(prefix="errtrail-chdb-grants-"))

    def parses(st):
        lit = "'" + st.replace("\\", "\\\\").replace("'", "\\'") + "'"
        try:
            s.query("SELECT formatQuery(%s)" % lit, "TSV")
            return True, ""
        except Exception as e:  # noqa: BLE001
            return False, str(e).splitlines()[0]

    ok, _ = parses("GRANT INSRT ON errtrail.incidents TO errtrail_alerter")
    check(not ok, "self-check: a misspelt privilege does not parse")
    for st in sts:
        ok, err = parses(st)
        check(ok, "parses: %s %s" % (st, err))
    flat = [" ".join(st.split()) for st in sts]
    for want in ("CREATE USER errtrail_alerter", "GRANT SELECT ON errtrail.* TO errtrail_alerter",
                 "GRANT INSERT ON errtrail.incidents TO errtrail_alerter",
                 "GRANT INSERT ON errtrail.alerter_minutes TO errtrail_alerter"):
        check(any(f.startswith(want) for f in flat), "the section has: " + want)
    check(not any(re.search(r"\bGRANT (ALL|INSERT ON errtrail\.\*)", f) for f in flat),
          "no grant of everything or of INSERT on every table")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
