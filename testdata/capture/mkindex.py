#!/usr/bin/env python3
"""Assemble parse/testdata/corpus/INDEX.md from each SDK's cases.tsv."""
import csv, os, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "parse", "testdata", "corpus")
out = ["# Captured error replies: index", "",
       "Raw replies captured off the wire from real SDK servers on 127.0.0.1 by `testdata/capture/run`.",
       "Each `<case>.http` is an HTTP/1.1 response exactly as received (chunked framing kept); each `<case>.grpc` is the",
       "gRPC reply text form of docs/event-contract.md built from the HPACK-decoded HEADERS frames in wire order;",
       "`<case>.req` is the request that was sent. Each SDK directory has its own INDEX.md (one row per case) and",
       "`cases.tsv` (the same rows for tools).",
       "`expected` names the error the case is meant to provoke (`-` = not an error envelope: a control such as a FAILED task).",
       "`accepted` says why the decoder's record may differ from `expected` (real SDK behaviour or an imprecise expectation);",
       "it is empty where they agree. parse/corpus_expected_test.go checks both.",
       "See testdata/capture/README.md for how the servers were configured and what the SDKs did differently.", ""]
summary = ["| corpus dir | SDK | version | jsonrpc | rest | grpc | mcp-http | index |", "|---|---|---|---|---|---|---|---|"]
for d in sorted(os.listdir(root)):
    p = os.path.join(root, d, "cases.tsv")
    if not os.path.isfile(p):
        continue
    with open(p, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        continue
    cell = lambda s: s.replace("|", "\\|")
    sub = [f"# {d}", "", f"SDK `{rows[0]['sdk']}` {rows[0]['version']}. See ../INDEX.md and testdata/capture/README.md.", "",
           "| binding | case | provoked | expected | accepted |", "|---|---|---|---|---|"]
    for r in rows:
        sub.append(f"| {r['binding']} | [{r['file']}]({r['file']}) | {cell(r['provoked'])} | {cell(r['expected'])} | {cell(r.get('accepted') or '')} |")
    failed = os.path.join(root, d, "FAILED.txt")
    if os.path.isfile(failed):
        sub += ["", "Cases that produced no reply in the last run:", ""]
        sub += ["- " + l.strip() for l in open(failed) if l.strip()]
    with open(os.path.join(root, d, "INDEX.md"), "w") as f:
        f.write("\n".join(sub) + "\n")
    n = lambda b: sum(1 for r in rows if r["binding"] == b) or ""
    summary.append(f"| {d} | `{rows[0]['sdk']}` | {rows[0]['version']} | {n('jsonrpc')} | {n('rest')} | {n('grpc')} | {n('mcp-http')} | [{d}/INDEX.md]({d}/INDEX.md) |")
out += summary + [""]
with open(os.path.join(root, "INDEX.md"), "w") as f:
    f.write("\n".join(out))
