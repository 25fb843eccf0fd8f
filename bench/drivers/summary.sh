#!/usr/bin/env bash
# bench/drivers/summary.sh FILE...: min–max per driver and table over the
# RESULT lines of run.sh outputs (CPU per unit, units per second, allocs).
set -euo pipefail
awk '
/^RESULT/ {
	key = $2 " " $3; tbl = ""
	for (i = 4; i <= NF && $i != "with_join:"; i++) {
		split($i, kv, "=")
		if (kv[1] ~ /^ns_cpu_per_/) cpu = kv[2]
		if (kv[1] ~ /_per_s$/) rate = kv[2]
		if (kv[1] ~ /^allocs_per_/) al = kv[2]
		if (kv[1] == "bytes_per_row" || kv[1] == "bytes_per_msg") by = kv[2]
		if (kv[1] == "table") { sub(/^[^.]*\./, "", kv[2]); tbl = kv[2] }
		if (kv[1] == "load") { split(kv[2], l, "/"); ld = l[1] }
	}
	key = key (tbl != "" ? " " tbl : "")
	if (!(key in n)) { order[++k] = key; cmin[key] = cpu; cmax[key] = cpu; rmin[key] = rate; rmax[key] = rate; lmin[key] = ld; lmax[key] = ld }
	n[key]++
	if (cpu < cmin[key]) cmin[key] = cpu; if (cpu > cmax[key]) cmax[key] = cpu
	if (rate < rmin[key]) rmin[key] = rate; if (rate > rmax[key]) rmax[key] = rate
	if (ld < lmin[key]) lmin[key] = ld; if (ld > lmax[key]) lmax[key] = ld
	csum[key] += cpu; alloc[key] = al; bytes[key] = by
}
END {
	printf "%-36s %4s %18s %10s %20s %10s %10s %12s\n", "what driver [table]", "runs", "ns CPU/unit", "mean", "units/s (wall)", "allocs", "B/unit", "load 1-min"
	for (i = 1; i <= k; i++) {
		key = order[i]
		printf "%-36s %4d %8.0f–%-8.0f %10.0f %9.0f–%-10.0f %10s %10s %5.2f–%-5.2f\n", key, n[key], cmin[key], cmax[key], csum[key] / n[key], rmin[key], rmax[key], alloc[key], bytes[key], lmin[key], lmax[key]
	}
}' "$@"
