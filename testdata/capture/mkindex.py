#!/usr/bin/env python3
"""Assemble parse/testdata/corpus/INDEX.md from each SDK's cases.tsv."""
import csv, os, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "parse", "testdata", "corpus")
out = ["# Captured error replies: index", "",
       "Raw replies captured off the wire from real SDK servers on 127.0.0.1 by `testdata/capture/run`.",
       "Each `<case>.http` is an HTTP/1.1 response exactly as received (chunked framing kept); each `<case>.grpc` is the",
       "gRPC reply text form of docs/event-contract.md built from the HPACK-decoded HEADERS frames in wire order;",
       "`<case>.req` is the request that was sent. Per-SDK `cases.tsv` holds the same rows for tools.",
       "`expected` names the error the case is meant to provoke (`-` = not an error envelope: a control such as a FAILED task).",
       "See testdata/capture/README.md for how the servers were configured and what the SDKs did differently.", ""]
for d in sorted(os.listdir(root)):
    p = os.path.join(root, d, "cases.tsv")
    if not os.path.isfile(p):
        continue
    with open(p, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        continue
    out += [f"## {d}", "", f"SDK `{rows[0]['sdk']}` {rows[0]['version']}", "",
            "| binding | case | provoked | expected |", "|---|---|---|---|"]
    for r in rows:
        cell = lambda s: s.replace("|", "\\|")
        out.append(f"| {r['binding']} | [{r['file']}]({d}/{r['file']}) | {cell(r['provoked'])} | {cell(r['expected'])} |")
    failed = os.path.join(root, d, "FAILED.txt")
    if os.path.isfile(failed):
        out += ["", "Cases that produced no capture in the last run:", ""]
        out += ["- " + l.strip() for l in open(failed) if l.strip()]
    out.append("")
with open(os.path.join(root, "INDEX.md"), "w") as f:
    f.write("\n".join(out))
