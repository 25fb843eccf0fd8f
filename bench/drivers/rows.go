package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/errtrail/errtrail/loadgen"
	"github.com/errtrail/errtrail/parse"
)

// cols is one batch of landing rows in the Go types ingest hands to
// clickhouse-go (ingest/columns.go): the same slices feed both drivers.
type cols struct {
	dead                                  []uint8
	eventID                               []string
	observedAt                            []int64
	observedAtMS                          []uint64
	ingestedAt                            []int64
	topic                                 []string
	partition                             []int32
	offset                                []int64
	sourceKind, sourceID, agent, endpoint []string
	caller, method                        []string
	attempt                               []uint16
	httpRequestID, jsonrpcID, messageID   []string
	taskID                                []string
	idemHash                              []uint64
	protocol, binding, envelope           []string
	httpStatus                            []uint16
	grpcStatus                            []string
	jsonrpcCode                           []int32
	code, reason, domain, kind            []string
	typed                                 []uint8
	retryable                             []int8
	retryableSource                       []string
	retryAfterMS                          []int64
	retryAfterSource, limit, scope        []string
	errorID, requestID, message           []string
	violationFields, violationDescs, find [][]string
	dlReason, dlError, raw                []string
}

// list returns the columns in schema.LandingColumns order, as ingest's
// appendTo passes them to batch.Column(i).Append.
func (c *cols) list() []any {
	return []any{
		c.dead, c.eventID, c.observedAt, c.observedAtMS, c.ingestedAt,
		c.topic, c.partition, c.offset,
		c.sourceKind, c.sourceID, c.agent, c.endpoint, c.caller, c.method, c.attempt,
		c.httpRequestID, c.jsonrpcID, c.messageID, c.taskID, c.idemHash,
		c.protocol, c.binding, c.envelope, c.httpStatus, c.grpcStatus, c.jsonrpcCode,
		c.code, c.reason, c.domain, c.kind, c.typed,
		c.retryable, c.retryableSource, c.retryAfterMS, c.retryAfterSource,
		c.limit, c.scope, c.errorID, c.requestID, c.message,
		c.violationFields, c.violationDescs, c.find,
		c.dlReason, c.dlError, c.raw,
	}
}

func (c *cols) rows() int { return len(c.dead) }

// makeRows generates n events of the load tool's steady scenario (the
// ~1.1 KiB events measure.sh floods), decodes them with parse and builds
// landing rows as ingest does. Lines that do not decode become dead-letter
// rows, as in ingest.
func makeRows(n int, topic string) (*cols, error) {
	sc, err := loadgen.Resolve("steady")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := loadgen.Run(ctx, loadgen.Config{
		Scenario: sc, Speed: 0, Loop: true, MaxEvents: int64(n), Duration: 5 * time.Minute,
		Output: &buf, KeepIDs: -1,
	}); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	lines := bytes.Split(bytes.TrimRight(buf.Bytes(), "\n"), []byte{'\n'})
	if len(lines) < n {
		return nil, fmt.Errorf("loadgen gave %d events, want %d", len(lines), n)
	}
	d := parse.NewDecoder(parse.Options{})
	c := &cols{}
	now := time.Now().Unix()
	for i, v := range lines[:n] {
		var rec parse.Record
		derr := d.DecodeMessage(v, nil, time.Now().UnixMilli(), &rec)
		c.add(&rec, derr, d.RawBody(), topic, int32(i%4), int64(i/4), now)
	}
	return c, nil
}

// s copies a string (the decoder's strings are borrowed).
func s(v string) string { return string([]byte(v)) }

func (c *cols) add(rec *parse.Record, derr error, raw []byte, topic string, part int32, off int64, now int64) {
	dead := derr != nil
	if dead {
		c.dead = append(c.dead, 1)
	} else {
		c.dead = append(c.dead, 0)
	}
	if rec.EventID != "" {
		c.eventID = append(c.eventID, s(rec.EventID))
	} else {
		c.eventID = append(c.eventID, "kafka:"+topic+"/"+strconv.Itoa(int(part))+"/"+strconv.FormatInt(off, 10))
	}
	obs := max(rec.ObservedAtMS, 0)
	c.observedAt = append(c.observedAt, obs/1000)
	c.observedAtMS = append(c.observedAtMS, uint64(obs))
	c.ingestedAt = append(c.ingestedAt, now)
	c.topic = append(c.topic, topic)
	c.partition = append(c.partition, part)
	c.offset = append(c.offset, off)
	c.sourceKind = append(c.sourceKind, s(rec.SourceKind))
	c.sourceID = append(c.sourceID, s(rec.SourceID))
	c.agent = append(c.agent, s(rec.Agent))
	c.endpoint = append(c.endpoint, s(rec.Endpoint))
	c.caller = append(c.caller, s(rec.Caller))
	c.method = append(c.method, s(rec.Method))
	c.attempt = append(c.attempt, uint16(min(max(rec.Attempt, 0), 65535)))
	c.httpRequestID = append(c.httpRequestID, s(rec.HTTPRequestID))
	c.jsonrpcID = append(c.jsonrpcID, s(rec.JSONRPCID))
	c.messageID = append(c.messageID, s(rec.MessageID))
	c.taskID = append(c.taskID, s(rec.TaskID))
	var ih uint64
	if rec.IdempotencyKey != "" {
		ih = xxhash.Sum64String(rec.IdempotencyKey)
	}
	c.idemHash = append(c.idemHash, ih)
	c.protocol = append(c.protocol, s(string(rec.Protocol)))
	c.binding = append(c.binding, s(string(rec.Binding)))
	c.envelope = append(c.envelope, s(string(rec.Envelope)))
	c.httpStatus = append(c.httpStatus, uint16(min(max(rec.HTTPStatus, 0), 65535)))
	c.grpcStatus = append(c.grpcStatus, rec.GRPCStatusName())
	c.jsonrpcCode = append(c.jsonrpcCode, int32(rec.JSONRPCCode))
	c.code = append(c.code, s(rec.Code))
	c.reason = append(c.reason, s(rec.Reason))
	c.domain = append(c.domain, s(rec.Domain))
	c.kind = append(c.kind, s(string(rec.Kind)))
	if rec.Typed {
		c.typed = append(c.typed, 1)
	} else {
		c.typed = append(c.typed, 0)
	}
	switch rec.Retryable {
	case parse.TriTrue:
		c.retryable = append(c.retryable, 1)
	case parse.TriFalse:
		c.retryable = append(c.retryable, 0)
	default:
		c.retryable = append(c.retryable, -1)
	}
	c.retryableSource = append(c.retryableSource, s(string(rec.RetryableSource)))
	c.retryAfterMS = append(c.retryAfterMS, max(rec.RetryAfterMS, -1))
	c.retryAfterSource = append(c.retryAfterSource, s(string(rec.RetryAfterSource)))
	c.limit = append(c.limit, s(rec.Limit))
	c.scope = append(c.scope, s(rec.Scope))
	c.errorID = append(c.errorID, s(rec.ErrorID))
	c.requestID = append(c.requestID, s(rec.RequestID))
	c.message = append(c.message, s(rec.Message))
	var vf, vd, fs []string
	for _, v := range rec.FieldViolations {
		vf = append(vf, s(v.Field))
		vd = append(vd, s(v.Description))
	}
	for _, f := range rec.Findings {
		fs = append(fs, s(string(f)))
	}
	c.violationFields = append(c.violationFields, vf)
	c.violationDescs = append(c.violationDescs, vd)
	c.find = append(c.find, fs)
	if dead {
		de, _ := derr.(*parse.DecodeError)
		reason := "unknown"
		if de != nil {
			reason = string(de.Reason)
		}
		c.dlReason = append(c.dlReason, reason)
		c.dlError = append(c.dlError, derr.Error())
		c.raw = append(c.raw, string(raw))
	} else {
		c.dlReason = append(c.dlReason, "")
		c.dlError = append(c.dlError, "")
		c.raw = append(c.raw, "")
	}
}
