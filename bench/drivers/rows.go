package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/errtrail/errtrail/ingest"
	"github.com/errtrail/errtrail/loadgen"
	"github.com/errtrail/errtrail/parse"
)

// batchRows is one batch of landing rows, built by ingest's own code
// (ingest.RowBuilder): the buffers ingest hands to clickhouse-go, which
// the other drivers copy from.
type batchRows struct {
	ingest.RowBuilder
	dead int // dead-letter rows
}

// makeRows generates n events of the load tool's steady scenario (the
// ~1.1 KiB events measure.sh floods), decodes them with parse and builds
// landing rows with ingest.RowBuilder, as ingest's decode workers do.
// Lines that do not decode become dead-letter rows, as in ingest. With
// vary, some rows get findings and field violations and some become
// dead-letter rows, so that every column carries data (ch-verify).
func makeRows(n int, topic string, vary bool) (*batchRows, error) {
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
	c := &batchRows{}
	now := time.Now()
	for i, v := range lines[:n] {
		src := ingest.RowSource{Topic: topic, Partition: int32(i % 4), Offset: int64(i / 4),
			KafkaTimeMS: now.UnixMilli(), IngestedAt: now.Unix()}
		var rec parse.Record
		var de *parse.DecodeError
		if err := d.DecodeMessage(v, nil, src.KafkaTimeMS, &rec); err != nil && !errors.As(err, &de) {
			de = &parse.DecodeError{Reason: parse.ErrBadEvent, Path: "event", Offset: -1, Detail: err.Error()}
		}
		raw := d.RawBody()
		if vary {
			if i%7 == 0 {
				rec.Findings = []parse.Finding{"secret_in_body", "stack_trace"}
			}
			if i%11 == 0 {
				rec.FieldViolations = []parse.FieldViolation{
					{Field: "params.message", Description: "required"},
					{Field: "params.id", Description: "must be a UUID"},
				}
			}
			if i%13 == 0 {
				de = &parse.DecodeError{Reason: parse.ErrInvalidJSON, Path: "reply.body", Offset: 17, Detail: "truncated"}
				raw = []byte(`{"error":`)
			}
		}
		if de == nil {
			raw = nil
		} else {
			c.dead++
		}
		c.Append(src, &rec, de, raw)
	}
	return c, nil
}
