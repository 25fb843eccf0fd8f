package main

// The two consumers the harness runs as child processes of itself: the
// transport floor (raw message value into one String column) and the naive
// consumer (encoding/json, 18 columns, row-by-row Append). Both use the
// kafka-go reader settings of cmd/ingest/connect.go, cut batches as ingest
// does (50,000 messages, 64 MiB or 1 s, whichever first), insert each batch
// with one clickhouse-go INSERT over the native protocol with LZ4 and commit
// its offsets once it is written. Fetching goes on while a batch is
// inserted (one batch in flight, like ingest's stages).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/segmentio/kafka-go"
)

const (
	batchRows  = 50_000
	batchBytes = 64 << 20
	batchWait  = time.Second
	blockRows  = 1024 // ingest's --insert.block-rows
)

func childMain(kind string, args []string) error {
	fs := flag.NewFlagSet(kind, flag.ExitOnError)
	brokers := fs.String("brokers", os.Getenv("ERRTRAIL_KAFKA_BROKERS"), "Kafka brokers")
	chAddr := fs.String("clickhouse", os.Getenv("ERRTRAIL_CLICKHOUSE_ADDR"), "ClickHouse native address")
	topic := fs.String("topic", "", "topic")
	group := fs.String("group", "", "consumer group")
	table := fs.String("table", "", "db.table to insert into")
	sync := fs.Bool("sync", false, "synchronous Distributed inserts (insert_distributed_sync = 1), as ingest makes on a cluster")
	_ = fs.Parse(args)
	settings := clickhouse.Settings{"log_queries": 1}
	if *sync {
		settings["insert_distributed_sync"] = 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	r := kafka.NewReader(kafka.ReaderConfig{ // cmd/ingest/connect.go's settings
		Brokers:           strings.Split(*brokers, ","),
		GroupID:           *group,
		Topic:             *topic,
		MinBytes:          1,
		MaxBytes:          8 << 20,
		MaxWait:           250 * time.Millisecond,
		QueueCapacity:     256,
		StartOffset:       kafka.FirstOffset,
		CommitInterval:    0,
		SessionTimeout:    6 * time.Second,
		HeartbeatInterval: time.Second,
		RebalanceTimeout:  30 * time.Second,
		JoinGroupBackoff:  time.Second,
	})
	defer r.Close()
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        []string{*chAddr},
		Protocol:    clickhouse.Native,
		Auth:        clickhouse.Auth{Database: "default"},
		Compression: &clickhouse.Compression{Method: clickhouse.CompressionLZ4},
		DialTimeout: 10 * time.Second,
		ReadTimeout: 5 * time.Minute,
		// One query_log row per INSERT, so the harness can split the
		// server's CPU into the inserts' own and the rest (merges).
		Settings:     settings,
		MaxOpenConns: 4,
	})
	if err != nil {
		return err
	}
	defer conn.Close()

	var write func(context.Context, []kafka.Message) error
	switch kind {
	case "floor":
		write = func(ctx context.Context, msgs []kafka.Message) error { return insertFloor(ctx, conn, *table, msgs) }
	case "naive":
		write = func(ctx context.Context, msgs []kafka.Message) error { return insertNaive(ctx, conn, *table, msgs) }
	}
	err = consume(ctx, r, write)
	if errors.Is(err, context.Canceled) {
		return nil // SIGTERM: the harness saw the drain end
	}
	return err
}

// consume cuts batches and hands each to one writer goroutine, which
// inserts and then commits the batch's highest offset of each partition.
func consume(ctx context.Context, r *kafka.Reader, write func(context.Context, []kafka.Message) error) error {
	batches := make(chan []kafka.Message, 1)
	errc := make(chan error, 1)
	go func() {
		for msgs := range batches {
			if err := write(ctx, msgs); err != nil {
				errc <- err
				return
			}
			last := map[int]kafka.Message{}
			for _, m := range msgs {
				last[m.Partition] = m
			}
			commits := make([]kafka.Message, 0, len(last))
			for _, m := range last {
				commits = append(commits, kafka.Message{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset})
			}
			if err := r.CommitMessages(ctx, commits...); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	defer close(batches)
	var (
		batch    []kafka.Message
		bytes    int
		deadline time.Time
	)
	for {
		select {
		case err := <-errc:
			return err
		default:
		}
		fctx, cancel := ctx, context.CancelFunc(func() {})
		if len(batch) == 0 {
			// Wake up now and then to see a writer's error.
			fctx, cancel = context.WithTimeout(ctx, batchWait)
		}
		if len(batch) > 0 {
			cancel()
			fctx, cancel = context.WithDeadline(ctx, deadline)
		}
		m, err := r.FetchMessage(fctx)
		cancel()
		switch {
		case err == nil:
			if len(batch) == 0 {
				deadline = time.Now().Add(batchWait)
			}
			batch = append(batch, m)
			bytes += len(m.Key) + len(m.Value)
		case ctx.Err() != nil:
			return ctx.Err()
		case !errors.Is(err, context.DeadlineExceeded):
			return err
		}
		if len(batch) > 0 && (len(batch) >= batchRows || bytes >= batchBytes || !time.Now().Before(deadline)) {
			select {
			case batches <- batch:
			case err := <-errc:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
			batch, bytes = make([]kafka.Message, 0, batchRows), 0
		}
	}
}

// insertFloor appends the raw values as whole-column slices in 1,024-row
// blocks, each sent with Flush, as ingest appends its columns.
func insertFloor(ctx context.Context, conn driver.Conn, table string, msgs []kafka.Message) error {
	bt, err := conn.PrepareBatch(ctx, "INSERT INTO "+table+" (value)")
	if err != nil {
		return err
	}
	vals := make([]string, 0, blockRows)
	for lo := 0; lo < len(msgs); lo += blockRows {
		vals = vals[:0]
		for _, m := range msgs[lo:min(lo+blockRows, len(msgs))] {
			vals = append(vals, string(m.Value))
		}
		if err := bt.Column(0).Append(vals); err != nil {
			_ = bt.Abort()
			return err
		}
		if err := bt.Flush(); err != nil {
			_ = bt.Abort()
			return err
		}
	}
	return bt.Send()
}

// event is the part of the event contract the naive consumer keeps.
type event struct {
	EventID    string `json:"event_id"`
	ObservedAt int64  `json:"observed_at"`
	Source     struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
	} `json:"source"`
	Agent    string `json:"agent"`
	Endpoint string `json:"endpoint"`
	Caller   string `json:"caller"`
	Method   string `json:"method"`
	Attempt  uint32 `json:"attempt"`
	Request  struct {
		HTTPRequestID string          `json:"http_request_id"`
		JSONRPCID     json.RawMessage `json:"jsonrpc_id"`
		MessageID     string          `json:"message_id"`
		TaskID        string          `json:"task_id"`
	} `json:"request"`
	Reply struct {
		Binding    string            `json:"binding"`
		HTTPStatus uint16            `json:"http_status"`
		Headers    map[string]string `json:"headers"`
		Body       string            `json:"body"`
		GRPC       *struct {
			Status  int64  `json:"status"`
			Message string `json:"message"`
		} `json:"grpc"`
	} `json:"reply"`
}

// body is a JSON-RPC error or an HTTP+JSON google.rpc.Status: both carry
// error.code and error.message.
type body struct {
	Error json.RawMessage `json:"error"`
}

type bodyError struct {
	Code    json.Number `json:"code"`
	Message string      `json:"message"`
}

// NaiveColumns is the naive consumer's table: 18 columns.
const NaiveColumns = `event_id String, observed_at DateTime, source_kind String, source_id String,
	agent String, endpoint String, caller String, method String, attempt UInt32,
	http_request_id String, jsonrpc_id String, message_id String, task_id String,
	binding String, http_status UInt16, error_code Int64, error_message String, retry_after String`

// insertNaive decodes each message with encoding/json (the event, then its
// body) and appends it row by row with Append, then one Send: what a first
// consumer written with these libraries looks like.
func insertNaive(ctx context.Context, conn driver.Conn, table string, msgs []kafka.Message) error {
	bt, err := conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+naiveNames()+")")
	if err != nil {
		return err
	}
	for _, m := range msgs {
		var e event
		_ = json.Unmarshal(m.Value, &e) // a bad event becomes a mostly empty row
		var code int64
		var msg string
		if e.Reply.GRPC != nil {
			code, msg = e.Reply.GRPC.Status, e.Reply.GRPC.Message
		} else if e.Reply.Body != "" {
			var b body
			if json.Unmarshal([]byte(e.Reply.Body), &b) == nil && len(b.Error) > 0 {
				var be bodyError
				if json.Unmarshal(b.Error, &be) == nil {
					code, _ = be.Code.Int64()
					msg = be.Message
				} else {
					_ = json.Unmarshal(b.Error, &msg)
				}
			}
		}
		rpcID := string(e.Request.JSONRPCID)
		if s, err := strconv.Unquote(rpcID); err == nil {
			rpcID = s
		}
		retryAfter := e.Reply.Headers["Retry-After"]
		if err := bt.Append(e.EventID, time.UnixMilli(e.ObservedAt), e.Source.Kind, e.Source.ID,
			e.Agent, e.Endpoint, e.Caller, e.Method, e.Attempt,
			e.Request.HTTPRequestID, rpcID, e.Request.MessageID, e.Request.TaskID,
			e.Reply.Binding, e.Reply.HTTPStatus, code, msg, retryAfter); err != nil {
			_ = bt.Abort()
			return fmt.Errorf("append: %w", err)
		}
	}
	return bt.Send()
}

// naiveNames is NaiveColumns' names: 18.16 sends no column header for an
// INSERT without a column list, so clickhouse-go needs one.
func naiveNames() string {
	var names []string
	for _, c := range strings.Split(NaiveColumns, ",") {
		names = append(names, strings.Fields(c)[0])
	}
	return strings.Join(names, ", ")
}
