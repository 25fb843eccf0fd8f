-- 000 bootstrap (checksum a730281fa983b6315021e844a6944c0b8af7f9d3cf656d56924ebd777edaae55)
CREATE DATABASE IF NOT EXISTS errtrail;

CREATE TABLE IF NOT EXISTS errtrail.schema_migrations
(
    version UInt32,
    name String,
    checksum String,
    server_version String,
    applied_at DateTime
)
ENGINE = ReplacingMergeTree(applied_at)
ORDER BY version;

-- 001 landing, errors and dead_letter (checksum bfdc2fdae7dca65bd9061cf14b6134e385be78cb25b1809d1f6ecfd6327c8edb)
CREATE TABLE IF NOT EXISTS errtrail.landing
(
    dead UInt8,
    event_id String,
    observed_at DateTime,
    observed_at_ms UInt64,
    ingested_at DateTime,
    kafka_topic String,
    kafka_partition Int32,
    kafka_offset Int64,
    source_kind String,
    source_id String,
    agent String,
    endpoint String,
    caller String,
    method String,
    attempt UInt16,
    http_request_id String,
    jsonrpc_id String,
    message_id String,
    task_id String,
    idempotency_key_hash UInt64,
    protocol String,
    binding String,
    envelope String,
    http_status UInt16,
    grpc_status String,
    jsonrpc_code Int32,
    code String,
    reason String,
    domain String,
    kind String,
    typed UInt8,
    retryable Int8,
    retryable_source String,
    retry_after_ms Int64,
    retry_after_source String,
    limit_name String,
    scope String,
    error_id String,
    request_id String,
    message String,
    violation_fields Array(String),
    violation_descriptions Array(String),
    findings Array(String),
    dl_reason String,
    dl_error String,
    raw String
)
ENGINE = Null;

CREATE TABLE IF NOT EXISTS errtrail.errors
(
    event_id String CODEC(ZSTD(1)),
    observed_at DateTime CODEC(DoubleDelta, ZSTD(1)),
    observed_at_ms UInt64 CODEC(DoubleDelta, ZSTD(1)),
    ingested_at DateTime CODEC(DoubleDelta, ZSTD(1)),
    kafka_topic LowCardinality(String),
    kafka_partition Int32,
    kafka_offset Int64,
    source_kind LowCardinality(String),
    source_id LowCardinality(String),
    agent LowCardinality(String),
    endpoint LowCardinality(String),
    caller LowCardinality(String),
    method LowCardinality(String),
    attempt UInt16,
    http_request_id String CODEC(ZSTD(1)),
    jsonrpc_id String CODEC(ZSTD(1)),
    message_id String CODEC(ZSTD(1)),
    task_id String CODEC(ZSTD(1)),
    idempotency_key_hash UInt64,
    protocol LowCardinality(String),
    binding LowCardinality(String),
    envelope LowCardinality(String),
    http_status UInt16,
    grpc_status LowCardinality(String),
    jsonrpc_code Int32,
    code LowCardinality(String),
    reason LowCardinality(String),
    domain LowCardinality(String),
    kind LowCardinality(String),
    typed UInt8,
    retryable Int8,
    retryable_source LowCardinality(String),
    retry_after_ms Int64,
    retry_after_source LowCardinality(String),
    limit_name LowCardinality(String),
    scope LowCardinality(String),
    error_id String CODEC(ZSTD(1)),
    request_id String CODEC(ZSTD(1)),
    message String CODEC(ZSTD(1)),
    violation_fields Array(String) CODEC(ZSTD(1)),
    violation_descriptions Array(String) CODEC(ZSTD(1)),
    findings Array(String) CODEC(ZSTD(1)),
    INDEX idx_error_id error_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_request_id request_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_http_request_id http_request_id TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_message message TYPE tokenbf_v1(8192, 3, 0) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMMDD(observed_at)
ORDER BY (agent, observed_at, event_id)
TTL observed_at + INTERVAL 30 DAY
SETTINGS index_granularity = 1024, non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS errtrail.dead_letter
(
    event_id String CODEC(ZSTD(1)),
    observed_at DateTime,
    observed_at_ms UInt64,
    ingested_at DateTime CODEC(DoubleDelta, ZSTD(1)),
    kafka_topic LowCardinality(String),
    kafka_partition Int32,
    kafka_offset Int64 CODEC(Delta, ZSTD(1)),
    source_kind LowCardinality(String),
    source_id LowCardinality(String),
    agent LowCardinality(String),
    endpoint LowCardinality(String),
    caller LowCardinality(String),
    method LowCardinality(String),
    dl_reason LowCardinality(String),
    dl_error String CODEC(ZSTD(1)),
    raw String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMMDD(ingested_at)
ORDER BY (kafka_topic, kafka_partition, kafka_offset)
TTL ingested_at + INTERVAL 30 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv1_errors TO errtrail.errors AS
SELECT
    if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))) AS event_id,
    observed_at,
    observed_at_ms,
    ingested_at,
    kafka_topic,
    kafka_partition,
    kafka_offset,
    source_kind,
    source_id,
    agent,
    endpoint,
    caller,
    method,
    attempt,
    http_request_id,
    jsonrpc_id,
    message_id,
    task_id,
    idempotency_key_hash,
    protocol,
    binding,
    envelope,
    http_status,
    grpc_status,
    jsonrpc_code,
    code,
    reason,
    domain,
    kind,
    typed,
    retryable,
    retryable_source,
    retry_after_ms,
    retry_after_source,
    limit_name,
    scope,
    error_id,
    request_id,
    message,
    violation_fields,
    violation_descriptions,
    findings
FROM errtrail.landing
WHERE dead = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv2_dead_letter TO errtrail.dead_letter AS
SELECT
    event_id,
    observed_at,
    observed_at_ms,
    ingested_at,
    kafka_topic,
    kafka_partition,
    kafka_offset,
    source_kind,
    source_id,
    agent,
    endpoint,
    caller,
    method,
    dl_reason,
    dl_error,
    raw
FROM errtrail.landing
WHERE dead = 1;

-- 002 error_lookup (checksum 55c1f2a0104aa19af7a36402c99e8eb35101044dfbb9f5f39de0b069d72ce471)
CREATE TABLE IF NOT EXISTS errtrail.error_lookup
(
    id String CODEC(ZSTD(1)),
    id_kind LowCardinality(String),
    observed_at DateTime,
    agent LowCardinality(String),
    event_id String CODEC(ZSTD(1))
)
ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(observed_at)
ORDER BY (id, id_kind, agent, observed_at, event_id)
TTL observed_at + INTERVAL 30 DAY
SETTINGS index_granularity = 1024, non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv3_error_lookup TO errtrail.error_lookup AS
SELECT
    tupleElement(id_pair, 1) AS id,
    tupleElement(id_pair, 2) AS id_kind,
    observed_at,
    agent,
    if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))) AS event_id
FROM errtrail.landing
ARRAY JOIN arrayFilter(p -> tupleElement(p, 1) != '', [
        (error_id, 'error_id'),
        (request_id, 'request_id'),
        (if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))), 'event_id'),
        (message_id, 'message_id'),
        (task_id, 'task_id'),
        (http_request_id, 'http_request_id')]) AS id_pair
WHERE dead = 0;

-- 003 errors_1m and outcomes_1m rollups (checksum 611d99f8226f5b5da3696203c84e381db2436eaf4a26f21b2ad93221f7944a4b)
CREATE TABLE IF NOT EXISTS errtrail.errors_1m
(
    agent LowCardinality(String),
    minute DateTime CODEC(DoubleDelta, ZSTD(1)),
    kind LowCardinality(String),
    caller LowCardinality(String),
    method LowCardinality(String),
    protocol LowCardinality(String),
    binding LowCardinality(String),
    code LowCardinality(String),
    reason LowCardinality(String),
    http_status UInt16,
    grpc_status LowCardinality(String),
    limit_name LowCardinality(String),
    typed UInt8,
    n UInt64,
    retry_after_ms_sum Int64,
    with_retry_after UInt64,
    untyped_5xx UInt64
)
ENGINE = SummingMergeTree((n, retry_after_ms_sum, with_retry_after, untyped_5xx))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (agent, minute, kind, caller, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed)
TTL minute + INTERVAL 90 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS errtrail.outcomes_1m
(
    minute DateTime CODEC(DoubleDelta, ZSTD(1)),
    kafka_topic LowCardinality(String),
    outcome LowCardinality(String),
    dl_reason LowCardinality(String),
    n UInt64
)
ENGINE = SummingMergeTree((n))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (kafka_topic, minute, outcome, dl_reason)
TTL minute + INTERVAL 90 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv4_errors_1m TO errtrail.errors_1m AS
SELECT
    agent,
    toStartOfMinute(observed_at) AS minute,
    kind,
    caller,
    method,
    protocol,
    binding,
    code,
    reason,
    http_status,
    grpc_status,
    limit_name,
    typed,
    count() AS n,
    sumIf(retry_after_ms, retry_after_ms >= 0) AS retry_after_ms_sum,
    countIf(retry_after_ms >= 0) AS with_retry_after,
    countIf(typed = 0 AND (http_status >= 500 OR grpc_status IN ('UNKNOWN', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'DEADLINE_EXCEEDED', 'UNIMPLEMENTED'))) AS untyped_5xx
FROM errtrail.landing
WHERE dead = 0
GROUP BY agent, minute, kind, caller, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv5_outcomes_1m TO errtrail.outcomes_1m AS
SELECT
    toStartOfMinute(ingested_at) AS minute,
    kafka_topic,
    if(dead = 1, 'dead_letter', 'accepted') AS outcome,
    dl_reason,
    count() AS n
FROM errtrail.landing
GROUP BY minute, kafka_topic, outcome, dl_reason;

-- 004 ingest_progress (checksum 64c69a8d730cc08bdd94031eb36596f1ed0c540365d1730a63794253ce8a6956)
CREATE TABLE IF NOT EXISTS errtrail.ingest_progress
(
    kafka_topic LowCardinality(String),
    kafka_partition Int32,
    max_offset Int64,
    updated_at DateTime
)
ENGINE = ReplacingMergeTree(max_offset)
ORDER BY (kafka_topic, kafka_partition)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv9_ingest_progress TO errtrail.ingest_progress AS
SELECT
    kafka_topic,
    kafka_partition,
    max(kafka_offset) AS max_offset,
    max(ingested_at) AS updated_at
FROM errtrail.landing
GROUP BY kafka_topic, kafka_partition;

-- 005 callers_1m rollup (checksum 99ddbbc4f4f6bdd5056da8de94329d9dabc67bd2576d99d2bb61537cab4c702b)
CREATE TABLE IF NOT EXISTS errtrail.callers_1m
(
    minute DateTime CODEC(DoubleDelta, ZSTD(1)),
    agent LowCardinality(String),
    caller LowCardinality(String),
    source_kind LowCardinality(String),
    n UInt64,
    quota UInt64,
    overload UInt64,
    cannot_tell UInt64,
    untyped UInt64
)
ENGINE = SummingMergeTree((n, quota, overload, cannot_tell, untyped))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (minute, agent, caller, source_kind)
TTL minute + INTERVAL 90 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv6_callers_1m TO errtrail.callers_1m AS
SELECT
    toStartOfMinute(observed_at) AS minute,
    agent,
    caller,
    source_kind,
    count() AS n,
    countIf(kind = 'quota') AS quota,
    countIf(kind = 'overload') AS overload,
    countIf(typed = 0 AND kind IN ('unknown', 'internal') AND grpc_status != 'RESOURCE_EXHAUSTED') AS cannot_tell,
    countIf(typed = 0) AS untyped
FROM errtrail.landing
WHERE dead = 0
GROUP BY minute, agent, caller, source_kind;

-- 006 findings_1h rollup (checksum 7626d6618275cd8e3a7f8edc1b41be51dfd26efd9375c8800b010af45cd42e3e)
CREATE TABLE IF NOT EXISTS errtrail.findings_1h
(
    agent LowCardinality(String),
    hour DateTime CODEC(DoubleDelta, ZSTD(1)),
    source_kind LowCardinality(String),
    finding LowCardinality(String),
    with_error_id UInt8,
    n UInt64,
    breaking UInt64,
    example_event_id String CODEC(ZSTD(1)),
    example_error_id String CODEC(ZSTD(1))
)
ENGINE = SummingMergeTree((n, breaking))
PARTITION BY toYYYYMMDD(hour)
ORDER BY (agent, hour, source_kind, finding, with_error_id)
TTL hour + INTERVAL 90 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv7_findings_1h TO errtrail.findings_1h AS
SELECT
    agent,
    toStartOfHour(observed_at) AS hour,
    source_kind,
    finding,
    toUInt8(error_id != '') AS with_error_id,
    count() AS n,
    countIf(notEmpty(findings)) AS breaking,
    argMax(if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))), (observed_at_ms, if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))))) AS example_event_id,
    argMax(error_id, (observed_at_ms, if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))))) AS example_error_id
FROM errtrail.landing
ARRAY JOIN arrayPushFront(findings, '') AS finding
WHERE dead = 0
GROUP BY agent, hour, source_kind, finding, with_error_id;

-- 007 incidents (checksum ab62edd904de356803dffa4f91ed6fb6ce49fd325a06fbf98267a248579a4309)
CREATE TABLE IF NOT EXISTS errtrail.alerter_minutes
(
    minute DateTime,
    writer LowCardinality(String),
    last_at DateTime
)
ENGINE = ReplacingMergeTree(last_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (minute, writer)
TTL minute + INTERVAL 90 DAY;

CREATE TABLE IF NOT EXISTS errtrail.incidents
(
    kind LowCardinality(String),
    agent LowCardinality(String),
    caller String CODEC(ZSTD(1)),
    reason LowCardinality(String),
    started_at DateTime,
    fired_at DateTime,
    last_seen_at DateTime,
    ended_at DateTime,
    detail LowCardinality(String),
    peak_rate Float64,
    baseline_rate Float64,
    peak_score Float64,
    peak_callers UInt32,
    peak_count UInt64,
    evaluations UInt32,
    writer LowCardinality(String),
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (agent, kind, caller, reason, started_at)
TTL last_seen_at + INTERVAL 90 DAY;

-- 008 source_version and error groups (checksum 670b411c74b6afb763c512beb66e794ba517eb8276ec32023ffbb03a812d9c43)
ALTER TABLE errtrail.errors ADD COLUMN IF NOT EXISTS source_version LowCardinality(String);

ALTER TABLE errtrail.landing ADD COLUMN IF NOT EXISTS source_version String;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv1_errors_v8 TO errtrail.errors AS
SELECT
    if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))) AS event_id,
    observed_at,
    observed_at_ms,
    ingested_at,
    kafka_topic,
    kafka_partition,
    kafka_offset,
    source_kind,
    source_id,
    agent,
    endpoint,
    caller,
    method,
    attempt,
    http_request_id,
    jsonrpc_id,
    message_id,
    task_id,
    idempotency_key_hash,
    protocol,
    binding,
    envelope,
    http_status,
    grpc_status,
    jsonrpc_code,
    code,
    reason,
    domain,
    kind,
    typed,
    retryable,
    retryable_source,
    retry_after_ms,
    retry_after_source,
    limit_name,
    scope,
    error_id,
    request_id,
    message,
    violation_fields,
    violation_descriptions,
    findings,
    source_version
FROM errtrail.landing
WHERE dead = 0;

DROP TABLE IF EXISTS errtrail.mv1_errors;

CREATE TABLE IF NOT EXISTS errtrail.mv1_errors
(
    dropped_by_migration_008 UInt8
)
ENGINE = Null;

CREATE TABLE IF NOT EXISTS errtrail.error_groups
(
    agent LowCardinality(String),
    protocol LowCardinality(String),
    code LowCardinality(String),
    kind LowCardinality(String),
    method LowCardinality(String),
    source_version LowCardinality(String),
    n AggregateFunction(count),
    first_seen AggregateFunction(min, DateTime),
    last_seen AggregateFunction(max, DateTime),
    callers AggregateFunction(uniq, String),
    example AggregateFunction(argMax, String, UInt64)
)
ENGINE = AggregatingMergeTree()
ORDER BY (agent, protocol, code, kind, method, source_version)
SETTINGS index_granularity = 256, non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS errtrail.error_groups_1h
(
    agent LowCardinality(String),
    protocol LowCardinality(String),
    code LowCardinality(String),
    kind LowCardinality(String),
    method LowCardinality(String),
    hour DateTime CODEC(DoubleDelta, ZSTD(1)),
    n UInt64
)
ENGINE = SummingMergeTree((n))
PARTITION BY toYYYYMM(hour)
ORDER BY (agent, protocol, code, kind, method, hour)
TTL hour + INTERVAL 90 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv8_error_groups TO errtrail.error_groups AS
SELECT
    agent,
    protocol,
    if(reason != '', reason, code) AS code,
    kind,
    method,
    source_version,
    countState() AS n,
    minState(observed_at) AS first_seen,
    maxState(observed_at) AS last_seen,
    uniqState(caller) AS callers,
    argMaxState(if(error_id != '', error_id, if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset)))), toUInt64(error_id != '') * 10000000000000 + observed_at_ms) AS example
FROM errtrail.landing
WHERE dead = 0
GROUP BY agent, protocol, code, kind, method, source_version;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv8_error_groups_1h TO errtrail.error_groups_1h AS
SELECT
    agent,
    protocol,
    if(reason != '', reason, code) AS code,
    kind,
    method,
    toStartOfHour(observed_at) AS hour,
    count() AS n
FROM errtrail.landing
WHERE dead = 0
GROUP BY agent, protocol, code, kind, method, hour;

-- 009 trace ids, origin and error_traces (checksum 12059fc4608298b939790ba91bef24fb917bfede973246f6242f25fa340645b9)
ALTER TABLE errtrail.landing ADD COLUMN IF NOT EXISTS trace_id String;

ALTER TABLE errtrail.landing ADD COLUMN IF NOT EXISTS span_id String;

ALTER TABLE errtrail.landing ADD COLUMN IF NOT EXISTS origin String;

ALTER TABLE errtrail.landing ADD COLUMN IF NOT EXISTS inferred Array(String);

ALTER TABLE errtrail.landing ADD COLUMN IF NOT EXISTS kafka_index UInt32;

CREATE TABLE IF NOT EXISTS errtrail.error_traces
(
    event_id String CODEC(ZSTD(1)),
    observed_at DateTime CODEC(DoubleDelta, ZSTD(1)),
    agent LowCardinality(String),
    ingested_at DateTime CODEC(DoubleDelta, ZSTD(1)),
    kafka_index UInt32,
    origin LowCardinality(String),
    trace_id String CODEC(ZSTD(1)),
    span_id String CODEC(ZSTD(1)),
    inferred Array(String) CODEC(ZSTD(1))
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMMDD(observed_at)
ORDER BY (agent, observed_at, event_id)
TTL observed_at + INTERVAL 30 DAY
SETTINGS index_granularity = 1024, non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv1t_error_traces TO errtrail.error_traces AS
SELECT
    if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))) AS event_id,
    observed_at,
    agent,
    ingested_at,
    kafka_index,
    origin,
    trace_id,
    span_id,
    inferred
FROM errtrail.landing
WHERE dead = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv3t_trace_lookup TO errtrail.error_lookup AS
SELECT
    trace_id AS id,
    'trace_id' AS id_kind,
    observed_at,
    agent,
    if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))) AS event_id
FROM errtrail.landing
WHERE dead = 0 AND trace_id != '';

-- 010 errors_1m_v2 without caller (checksum c97c20e226f65e7ad1c61baf6bb6cb745b6bcefca6e8aa1b341a18829b60098a)
CREATE TABLE IF NOT EXISTS errtrail.errors_1m_v2
(
    agent LowCardinality(String),
    minute DateTime CODEC(DoubleDelta, ZSTD(1)),
    kind LowCardinality(String),
    method LowCardinality(String),
    protocol LowCardinality(String),
    binding LowCardinality(String),
    code LowCardinality(String),
    reason LowCardinality(String),
    http_status UInt16,
    grpc_status LowCardinality(String),
    limit_name LowCardinality(String),
    typed UInt8,
    n UInt64,
    retry_after_ms_sum Int64,
    with_retry_after UInt64,
    untyped_5xx UInt64
)
ENGINE = SummingMergeTree((n, retry_after_ms_sum, with_retry_after, untyped_5xx))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (agent, minute, kind, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed)
TTL minute + INTERVAL 90 DAY
SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv4_errors_1m_v2 TO errtrail.errors_1m_v2 AS
SELECT
    agent,
    toStartOfMinute(observed_at) AS minute,
    kind,
    method,
    protocol,
    binding,
    code,
    reason,
    http_status,
    grpc_status,
    limit_name,
    typed,
    count() AS n,
    sumIf(retry_after_ms, retry_after_ms >= 0) AS retry_after_ms_sum,
    countIf(retry_after_ms >= 0) AS with_retry_after,
    countIf(typed = 0 AND (http_status >= 500 OR grpc_status IN ('UNKNOWN', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'DEADLINE_EXCEEDED', 'UNIMPLEMENTED'))) AS untyped_5xx
FROM errtrail.landing
WHERE dead = 0
GROUP BY agent, minute, kind, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed;

DROP TABLE IF EXISTS errtrail.mv4_errors_1m;

CREATE TABLE IF NOT EXISTS errtrail.mv4_errors_1m
(
    dropped_by_migration_010 UInt8
)
ENGINE = Null;

