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

-- 001 landing, errors and dead_letter (checksum 8790c9bd72324b5487aefb70ce9d3e5c505133617ad78807269da38bf13399a4)
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
    findings Array(String)
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMMDD(observed_at)
ORDER BY (agent, observed_at, event_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS errtrail.dead_letter
(
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
    dl_reason String,
    dl_error String,
    raw String
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMMDD(ingested_at)
ORDER BY (kafka_topic, kafka_partition, kafka_offset);

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

-- 002 error_lookup (checksum ed3198d0f6d50f66bb41c79ac4e914bb81b670fe84a62f8587dfdc12c735a4c6)
CREATE TABLE IF NOT EXISTS errtrail.error_lookup
(
    id String,
    id_kind String,
    observed_at DateTime,
    agent String,
    event_id String
)
ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(observed_at)
ORDER BY (id, id_kind, agent, observed_at, event_id)
SETTINGS index_granularity = 1024;

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

-- 003 errors_1m and outcomes_1m rollups (checksum 6add8133bfe82bc18ec7e3bc18383ae97363d129b48e741fe679c25baedcc913)
CREATE TABLE IF NOT EXISTS errtrail.errors_1m
(
    agent String,
    minute DateTime,
    kind String,
    caller String,
    method String,
    protocol String,
    binding String,
    code String,
    reason String,
    http_status UInt16,
    grpc_status String,
    limit_name String,
    typed UInt8,
    n UInt64,
    retry_after_ms_sum Int64,
    with_retry_after UInt64,
    untyped_5xx UInt64
)
ENGINE = SummingMergeTree((n, retry_after_ms_sum, with_retry_after, untyped_5xx))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (agent, minute, kind, caller, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed);

CREATE TABLE IF NOT EXISTS errtrail.outcomes_1m
(
    minute DateTime,
    kafka_topic String,
    outcome String,
    dl_reason String,
    n UInt64
)
ENGINE = SummingMergeTree((n))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (kafka_topic, minute, outcome, dl_reason);

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

-- 004 ingest_progress (checksum fb3686c3a09adf11ea9bf13e0d447e31790334bc9a4697c16f503967661a6feb)
CREATE TABLE IF NOT EXISTS errtrail.ingest_progress
(
    kafka_topic String,
    kafka_partition Int32,
    max_offset Int64,
    updated_at DateTime
)
ENGINE = ReplacingMergeTree(max_offset)
ORDER BY (kafka_topic, kafka_partition);

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv9_ingest_progress TO errtrail.ingest_progress AS
SELECT
    kafka_topic,
    kafka_partition,
    max(kafka_offset) AS max_offset,
    max(ingested_at) AS updated_at
FROM errtrail.landing
GROUP BY kafka_topic, kafka_partition;

-- 005 callers_1m rollup (checksum e13eb2053f68a0f0a42133ffe32370abeda99795bc5d642ed8a0ccdbc85ece82)
CREATE TABLE IF NOT EXISTS errtrail.callers_1m
(
    minute DateTime,
    agent String,
    caller String,
    source_kind String,
    n UInt64,
    quota UInt64,
    overload UInt64,
    cannot_tell UInt64,
    untyped UInt64
)
ENGINE = SummingMergeTree((n, quota, overload, cannot_tell, untyped))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (minute, agent, caller, source_kind);

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

-- 006 findings_1h rollup (checksum 710683ac4696c6baab14af73439207a794dbec87e6de99aa1c2473eded43da35)
CREATE TABLE IF NOT EXISTS errtrail.findings_1h
(
    agent String,
    hour DateTime,
    source_kind String,
    finding String,
    with_error_id UInt8,
    n UInt64,
    breaking UInt64,
    example_event_id String,
    example_error_id String
)
ENGINE = SummingMergeTree((n, breaking))
PARTITION BY toYYYYMMDD(hour)
ORDER BY (agent, hour, source_kind, finding, with_error_id);

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

-- 007 incidents (checksum 755378a546ce3430fdfe774bbebc29033129086093ec7e31c439fe7757afe91b)
CREATE TABLE IF NOT EXISTS errtrail.alerter_minutes
(
    minute DateTime,
    writer String,
    last_at DateTime
)
ENGINE = ReplacingMergeTree(last_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (minute, writer);

CREATE TABLE IF NOT EXISTS errtrail.incidents
(
    kind String,
    agent String,
    caller String,
    reason String,
    started_at DateTime,
    fired_at DateTime,
    last_seen_at DateTime,
    ended_at DateTime,
    detail String,
    peak_rate Float64,
    baseline_rate Float64,
    peak_score Float64,
    peak_callers UInt32,
    peak_count UInt64,
    evaluations UInt32,
    writer String,
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (agent, kind, caller, reason, started_at);

-- 008 source_version and error groups (checksum 9f21b83dcc8a8376b8f6927131b8e7171e86b161d1580e8f1325942b291a180b)
ALTER TABLE errtrail.errors ADD COLUMN source_version String;

ALTER TABLE errtrail.landing ADD COLUMN source_version String;

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
    agent String,
    protocol String,
    code String,
    kind String,
    method String,
    source_version String,
    n AggregateFunction(count),
    first_seen AggregateFunction(min, DateTime),
    last_seen AggregateFunction(max, DateTime),
    callers AggregateFunction(uniq, String),
    example AggregateFunction(argMax, String, UInt64)
)
ENGINE = AggregatingMergeTree()
ORDER BY (agent, protocol, code, kind, method, source_version)
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS errtrail.error_groups_1h
(
    agent String,
    protocol String,
    code String,
    kind String,
    method String,
    hour DateTime,
    n UInt64
)
ENGINE = SummingMergeTree((n))
PARTITION BY toYYYYMM(hour)
ORDER BY (agent, protocol, code, kind, method, hour);

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

-- 009 trace ids, origin and error_traces (checksum 346288a6714ab4be479fc78185c609884139506da135f40994f4df8df005ca1a)
ALTER TABLE errtrail.landing ADD COLUMN trace_id String;

ALTER TABLE errtrail.landing ADD COLUMN span_id String;

ALTER TABLE errtrail.landing ADD COLUMN origin String;

ALTER TABLE errtrail.landing ADD COLUMN inferred Array(String);

ALTER TABLE errtrail.landing ADD COLUMN kafka_index UInt32;

CREATE TABLE IF NOT EXISTS errtrail.error_traces
(
    event_id String,
    observed_at DateTime,
    agent String,
    ingested_at DateTime,
    kafka_index UInt32,
    origin String,
    trace_id String,
    span_id String,
    inferred Array(String)
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMMDD(observed_at)
ORDER BY (agent, observed_at, event_id)
SETTINGS index_granularity = 1024;

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

-- 010 errors_1m_v2 without caller (checksum d20aa91e9f239ff142301dc66be1bfdbc12582758a27db851d193d8635df14a8)
CREATE TABLE IF NOT EXISTS errtrail.errors_1m_v2
(
    agent String,
    minute DateTime,
    kind String,
    method String,
    protocol String,
    binding String,
    code String,
    reason String,
    http_status UInt16,
    grpc_status String,
    limit_name String,
    typed UInt8,
    n UInt64,
    retry_after_ms_sum Int64,
    with_retry_after UInt64,
    untyped_5xx UInt64
)
ENGINE = SummingMergeTree((n, retry_after_ms_sum, with_retry_after, untyped_5xx))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (agent, minute, kind, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed);

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

