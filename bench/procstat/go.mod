module errtrail.bench/procstat

go 1.26.8
