-- 000 bootstrap (checksum 986c5d4bc5fea2b370adc149c2ecd7b80314b1db5c1b4651756377ca7a500aff)
CREATE DATABASE IF NOT EXISTS errtrail ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.schema_migrations ON CLUSTER errtrail_cluster
(
    version UInt32,
    name String,
    checksum String,
    server_version String,
    applied_at DateTime
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/errtrail/schema_migrations', '{shard}-{replica}', applied_at)
ORDER BY version;

-- 001 landing, errors and dead_letter (checksum 656718746e14adb3320194684cc42c597bc77a3b4b0fe470de8398ca75674f65)
CREATE TABLE IF NOT EXISTS errtrail.landing_local ON CLUSTER errtrail_cluster
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

CREATE TABLE IF NOT EXISTS errtrail.landing ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, landing_local, cityHash64(kafka_topic, kafka_partition));

CREATE TABLE IF NOT EXISTS errtrail.errors_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/errtrail/errors_local', '{replica}', ingested_at)
PARTITION BY toYYYYMMDD(observed_at)
ORDER BY (agent, observed_at, event_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS errtrail.errors ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, errors_local, cityHash64(kafka_topic, kafka_partition));

CREATE TABLE IF NOT EXISTS errtrail.dead_letter_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/errtrail/dead_letter_local', '{replica}', ingested_at)
PARTITION BY toYYYYMMDD(ingested_at)
ORDER BY (kafka_topic, kafka_partition, kafka_offset);

CREATE TABLE IF NOT EXISTS errtrail.dead_letter ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, dead_letter_local, cityHash64(kafka_topic, kafka_partition));

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv1_errors ON CLUSTER errtrail_cluster TO errtrail.errors_local AS
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
FROM errtrail.landing_local
WHERE dead = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv2_dead_letter ON CLUSTER errtrail_cluster TO errtrail.dead_letter_local AS
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
FROM errtrail.landing_local
WHERE dead = 1;

-- 002 error_lookup (checksum e18743ad8b03a83078a4e0efa32873b3ae96e361c1205a3553edc6cf9e417602)
CREATE TABLE IF NOT EXISTS errtrail.error_lookup_local ON CLUSTER errtrail_cluster
(
    id String,
    id_kind String,
    observed_at DateTime,
    agent String,
    event_id String
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/errtrail/error_lookup_local', '{replica}')
PARTITION BY toYYYYMM(observed_at)
ORDER BY (id, id_kind, agent, observed_at, event_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS errtrail.error_lookup ON CLUSTER errtrail_cluster
(
    id String,
    id_kind String,
    observed_at DateTime,
    agent String,
    event_id String
)
ENGINE = Distributed(errtrail_cluster, errtrail, error_lookup_local, rand());

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv3_error_lookup ON CLUSTER errtrail_cluster TO errtrail.error_lookup_local AS
SELECT
    tupleElement(id_pair, 1) AS id,
    tupleElement(id_pair, 2) AS id_kind,
    observed_at,
    agent,
    if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))) AS event_id
FROM errtrail.landing_local
ARRAY JOIN arrayFilter(p -> tupleElement(p, 1) != '', [
        (error_id, 'error_id'),
        (request_id, 'request_id'),
        (if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))), 'event_id'),
        (message_id, 'message_id'),
        (task_id, 'task_id'),
        (http_request_id, 'http_request_id')]) AS id_pair
WHERE dead = 0;

-- 003 errors_1m and outcomes_1m rollups (checksum 7a4957f4152ddd7487de0035d15eef93b4c67464827f57fc730f125e3a3e5558)
CREATE TABLE IF NOT EXISTS errtrail.errors_1m_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/errtrail/errors_1m_local', '{replica}', (n, retry_after_ms_sum, with_retry_after, untyped_5xx))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (agent, minute, kind, caller, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed);

CREATE TABLE IF NOT EXISTS errtrail.errors_1m ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, errors_1m_local, rand());

CREATE TABLE IF NOT EXISTS errtrail.outcomes_1m_local ON CLUSTER errtrail_cluster
(
    minute DateTime,
    kafka_topic String,
    outcome String,
    dl_reason String,
    n UInt64
)
ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/errtrail/outcomes_1m_local', '{replica}', (n))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (kafka_topic, minute, outcome, dl_reason);

CREATE TABLE IF NOT EXISTS errtrail.outcomes_1m ON CLUSTER errtrail_cluster
(
    minute DateTime,
    kafka_topic String,
    outcome String,
    dl_reason String,
    n UInt64
)
ENGINE = Distributed(errtrail_cluster, errtrail, outcomes_1m_local, rand());

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv4_errors_1m ON CLUSTER errtrail_cluster TO errtrail.errors_1m_local AS
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
FROM errtrail.landing_local
WHERE dead = 0
GROUP BY agent, minute, kind, caller, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv5_outcomes_1m ON CLUSTER errtrail_cluster TO errtrail.outcomes_1m_local AS
SELECT
    toStartOfMinute(ingested_at) AS minute,
    kafka_topic,
    if(dead = 1, 'dead_letter', 'accepted') AS outcome,
    dl_reason,
    count() AS n
FROM errtrail.landing_local
GROUP BY minute, kafka_topic, outcome, dl_reason;

-- 004 ingest_progress (checksum 126317a2cd31569bfe71f6c7a309ef9ed85c2db4b4641eef63338fba1096041f)
CREATE TABLE IF NOT EXISTS errtrail.ingest_progress_local ON CLUSTER errtrail_cluster
(
    kafka_topic String,
    kafka_partition Int32,
    max_offset Int64,
    updated_at DateTime
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/errtrail/ingest_progress_local', '{replica}', max_offset)
ORDER BY (kafka_topic, kafka_partition);

CREATE TABLE IF NOT EXISTS errtrail.ingest_progress ON CLUSTER errtrail_cluster
(
    kafka_topic String,
    kafka_partition Int32,
    max_offset Int64,
    updated_at DateTime
)
ENGINE = Distributed(errtrail_cluster, errtrail, ingest_progress_local, cityHash64(kafka_topic, kafka_partition));

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv9_ingest_progress ON CLUSTER errtrail_cluster TO errtrail.ingest_progress_local AS
SELECT
    kafka_topic,
    kafka_partition,
    max(kafka_offset) AS max_offset,
    max(ingested_at) AS updated_at
FROM errtrail.landing_local
GROUP BY kafka_topic, kafka_partition;

-- 005 callers_1m rollup (checksum e216b3934b5ac35879f7c503cf7c27e6c30f40a25453b516face5efcc399f372)
CREATE TABLE IF NOT EXISTS errtrail.callers_1m_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/errtrail/callers_1m_local', '{replica}', (n, quota, overload, cannot_tell, untyped))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (minute, agent, caller, source_kind);

CREATE TABLE IF NOT EXISTS errtrail.callers_1m ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, callers_1m_local, rand());

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv6_callers_1m ON CLUSTER errtrail_cluster TO errtrail.callers_1m_local AS
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
FROM errtrail.landing_local
WHERE dead = 0
GROUP BY minute, agent, caller, source_kind;

-- 006 findings_1h rollup (checksum 81136ecd949bb69f1e9e8d8d4bd9457f9f3a68db26e6a4b02a0ccfa69f0804bc)
CREATE TABLE IF NOT EXISTS errtrail.findings_1h_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/errtrail/findings_1h_local', '{replica}', (n, breaking))
PARTITION BY toYYYYMMDD(hour)
ORDER BY (agent, hour, source_kind, finding, with_error_id);

CREATE TABLE IF NOT EXISTS errtrail.findings_1h ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, findings_1h_local, rand());

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv7_findings_1h ON CLUSTER errtrail_cluster TO errtrail.findings_1h_local AS
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
FROM errtrail.landing_local
ARRAY JOIN arrayPushFront(findings, '') AS finding
WHERE dead = 0
GROUP BY agent, hour, source_kind, finding, with_error_id;

-- 007 incidents (checksum aa24e4980ce16a1c4d2c13faf73acbbf62107bf5231e29a3a39e155564efbb88)
CREATE TABLE IF NOT EXISTS errtrail.alerter_minutes_local ON CLUSTER errtrail_cluster
(
    minute DateTime,
    writer String,
    last_at DateTime
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/errtrail/alerter_minutes_local', '{replica}', last_at)
PARTITION BY toYYYYMM(minute)
ORDER BY (minute, writer);

CREATE TABLE IF NOT EXISTS errtrail.alerter_minutes ON CLUSTER errtrail_cluster
(
    minute DateTime,
    writer String,
    last_at DateTime
)
ENGINE = Distributed(errtrail_cluster, errtrail, alerter_minutes_local, cityHash64(writer));

CREATE TABLE IF NOT EXISTS errtrail.incidents_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/errtrail/incidents_local', '{replica}', version)
PARTITION BY toYYYYMM(started_at)
ORDER BY (agent, kind, caller, reason, started_at);

CREATE TABLE IF NOT EXISTS errtrail.incidents ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, incidents_local, cityHash64(kind, agent, caller, reason));

-- 008 source_version and error groups (checksum 9f8a910f6773ddf55bfdfb07ecaba3658d066b4eb8b40ccb4d5cb5f7a7585d00)
ALTER TABLE errtrail.errors_local ON CLUSTER errtrail_cluster ADD COLUMN source_version String;

DROP TABLE IF EXISTS errtrail.errors ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.errors ON CLUSTER errtrail_cluster
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
    findings Array(String),
    source_version String
)
ENGINE = Distributed(errtrail_cluster, errtrail, errors_local, cityHash64(kafka_topic, kafka_partition));

DROP TABLE IF EXISTS errtrail.landing_local ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.landing_local ON CLUSTER errtrail_cluster
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
    raw String,
    source_version String
)
ENGINE = Null;

DROP TABLE IF EXISTS errtrail.landing ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.landing ON CLUSTER errtrail_cluster
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
    raw String,
    source_version String
)
ENGINE = Distributed(errtrail_cluster, errtrail, landing_local, cityHash64(kafka_topic, kafka_partition));

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv1_errors_v8 ON CLUSTER errtrail_cluster TO errtrail.errors_local AS
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
FROM errtrail.landing_local
WHERE dead = 0;

DROP TABLE IF EXISTS errtrail.mv1_errors ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.mv1_errors ON CLUSTER errtrail_cluster
(
    dropped_by_migration_008 UInt8
)
ENGINE = Null;

CREATE TABLE IF NOT EXISTS errtrail.error_groups_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/errtrail/error_groups_local', '{replica}')
ORDER BY (agent, protocol, code, kind, method, source_version)
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS errtrail.error_groups ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, error_groups_local, rand());

CREATE TABLE IF NOT EXISTS errtrail.error_groups_1h_local ON CLUSTER errtrail_cluster
(
    agent String,
    protocol String,
    code String,
    kind String,
    method String,
    hour DateTime,
    n UInt64
)
ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/errtrail/error_groups_1h_local', '{replica}', (n))
PARTITION BY toYYYYMM(hour)
ORDER BY (agent, protocol, code, kind, method, hour);

CREATE TABLE IF NOT EXISTS errtrail.error_groups_1h ON CLUSTER errtrail_cluster
(
    agent String,
    protocol String,
    code String,
    kind String,
    method String,
    hour DateTime,
    n UInt64
)
ENGINE = Distributed(errtrail_cluster, errtrail, error_groups_1h_local, rand());

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv8_error_groups ON CLUSTER errtrail_cluster TO errtrail.error_groups_local AS
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
FROM errtrail.landing_local
WHERE dead = 0
GROUP BY agent, protocol, code, kind, method, source_version;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv8_error_groups_1h ON CLUSTER errtrail_cluster TO errtrail.error_groups_1h_local AS
SELECT
    agent,
    protocol,
    if(reason != '', reason, code) AS code,
    kind,
    method,
    toStartOfHour(observed_at) AS hour,
    count() AS n
FROM errtrail.landing_local
WHERE dead = 0
GROUP BY agent, protocol, code, kind, method, hour;

-- 009 trace ids, origin and error_traces (checksum 8a9e0a077a81ce3cebc95a48fc80b2ab5d643db3034496e2bf235f8d4ee0b824)
DROP TABLE IF EXISTS errtrail.landing_local ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.landing_local ON CLUSTER errtrail_cluster
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
    raw String,
    source_version String,
    trace_id String,
    span_id String,
    origin String,
    inferred Array(String),
    kafka_index UInt32
)
ENGINE = Null;

DROP TABLE IF EXISTS errtrail.landing ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.landing ON CLUSTER errtrail_cluster
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
    raw String,
    source_version String,
    trace_id String,
    span_id String,
    origin String,
    inferred Array(String),
    kafka_index UInt32
)
ENGINE = Distributed(errtrail_cluster, errtrail, landing_local, cityHash64(kafka_topic, kafka_partition));

CREATE TABLE IF NOT EXISTS errtrail.error_traces_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/errtrail/error_traces_local', '{replica}', ingested_at)
PARTITION BY toYYYYMMDD(observed_at)
ORDER BY (agent, observed_at, event_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS errtrail.error_traces ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, error_traces_local, rand());

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv1t_error_traces ON CLUSTER errtrail_cluster TO errtrail.error_traces_local AS
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
FROM errtrail.landing_local
WHERE dead = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv3t_trace_lookup ON CLUSTER errtrail_cluster TO errtrail.error_lookup_local AS
SELECT
    trace_id AS id,
    'trace_id' AS id_kind,
    observed_at,
    agent,
    if(event_id != '', event_id, concat('kafka:', kafka_topic, '/', toString(kafka_partition), '/', toString(kafka_offset))) AS event_id
FROM errtrail.landing_local
WHERE dead = 0 AND trace_id != '';

-- 010 errors_1m_v2 without caller (checksum a129788e11ea77f18bfb914bfa4a29a71b7f1fb20111ce5ce7c807929b94f30b)
CREATE TABLE IF NOT EXISTS errtrail.errors_1m_v2_local ON CLUSTER errtrail_cluster
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
ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/errtrail/errors_1m_v2_local', '{replica}', (n, retry_after_ms_sum, with_retry_after, untyped_5xx))
PARTITION BY toYYYYMMDD(minute)
ORDER BY (agent, minute, kind, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed);

CREATE TABLE IF NOT EXISTS errtrail.errors_1m_v2 ON CLUSTER errtrail_cluster
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
ENGINE = Distributed(errtrail_cluster, errtrail, errors_1m_v2_local, rand());

CREATE MATERIALIZED VIEW IF NOT EXISTS errtrail.mv4_errors_1m_v2 ON CLUSTER errtrail_cluster TO errtrail.errors_1m_v2_local AS
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
FROM errtrail.landing_local
WHERE dead = 0
GROUP BY agent, minute, kind, method, protocol, binding, code, reason, http_status, grpc_status, limit_name, typed;

DROP TABLE IF EXISTS errtrail.mv4_errors_1m ON CLUSTER errtrail_cluster;

CREATE TABLE IF NOT EXISTS errtrail.mv4_errors_1m ON CLUSTER errtrail_cluster
(
    dropped_by_migration_010 UInt8
)
ENGINE = Null;

