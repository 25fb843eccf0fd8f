package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/errtrail/errtrail/schema"
)

// chgoShim turns on helloShim (see shim.go); chgoPatched says it was used.
var chgoShim, chgoPatched = true, false

func chgoOpen(ctx context.Context, addr string) (*ch.Client, error) {
	var d ch.Dialer
	if chgoShim {
		d = shimDialer{patched: &chgoPatched}
	}
	return ch.Dial(ctx, ch.Options{
		Dialer:      d,
		Address:     addr,
		Compression: ch.CompressionLZ4,
		ReadTimeout: time.Minute,
		DialTimeout: 10 * time.Second,
		ClientName:  "errtrail-bench",
	})
}

func colNames() []string {
	n := make([]string, len(schema.LandingColumns))
	for i, c := range schema.LandingColumns {
		n[i] = c.Name
	}
	return n
}

// ddl is the landing table's column list (schema.LandingColumns) with the
// given engine.
func ddl(table, engine string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + table + " (")
	for i, c := range schema.LandingColumns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name + " " + c.Type)
	}
	b.WriteString(") ENGINE = " + engine)
	return b.String()
}

func chgoOpenDefault(addr string) (driver.Conn, error) {
	return clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, Protocol: clickhouse.Native, DialTimeout: 10 * time.Second})
}

func chSetup(ctx context.Context, addr, db string) error {
	c, err := chgoOpenDefault(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + db,
		ddl(db+".landing_null", "Null"),
		ddl(db+".landing_mt", "MergeTree ORDER BY (kafka_partition, kafka_offset)"),
	} {
		if err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func chDrop(ctx context.Context, addr, db string) error {
	c, err := chgoOpenDefault(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Exec(ctx, "DROP DATABASE IF EXISTS "+db)
}

// chProbe runs SELECT 1 through ch-go as it comes, then through the shim.
func chProbe(ctx context.Context, addr string) {
	for _, shim := range []bool{false, true} {
		chgoShim = shim
		c, err := chgoOpen(ctx, addr)
		if err != nil {
			fmt.Printf("PROBE ch-go shim=%v: dial: %v\n", shim, err)
			continue
		}
		var one proto.ColUInt8
		err = c.Do(ctx, ch.Query{Body: "SELECT toUInt8(1) AS one", Result: proto.Results{{Name: "one", Data: &one}}})
		hello := c.ServerInfo()
		fmt.Printf("PROBE ch-go v0.75.0 (protocol %d) -> %s %d.%d revision-seen %d shim=%v: ", proto.Version, hello.Name, hello.Major, hello.Minor, hello.Revision, shim)
		if err != nil {
			fmt.Printf("FAILS: %v\n", err)
		} else {
			fmt.Printf("ok (%d rows)\n", one.Rows())
		}
		_ = c.Close()
	}
	chgoShim = true
}

// inserter sends one batch of rows per call.
type inserter interface {
	insert(ctx context.Context, c *batchRows) error
	close()
}

// chGoInserter is ingest's path: PrepareBatch, then the 46 columns of each
// block by ingest's own code (RowBuilder.AppendTo) and Flush, then Send. With block > 0 the rows go in
// blocks of that many, as ingest does since session 3
// (Config.InsertBlockRows); 0 is the one-block insert ingest used before,
// which appended every column's whole slice, arrays by reflection.
type chGoInserter struct {
	conn  driver.Conn
	sql   string
	block int
}

func newClickhouseGo(addr, table string, block int) (*chGoInserter, error) {
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:         []string{addr},
		Protocol:     clickhouse.Native,
		Auth:         clickhouse.Auth{Database: "default", Username: "default"},
		Compression:  &clickhouse.Compression{Method: clickhouse.CompressionLZ4},
		DialTimeout:  10 * time.Second,
		ReadTimeout:  time.Minute,
		MaxOpenConns: 4,
	})
	if err != nil {
		return nil, err
	}
	return &chGoInserter{conn: conn, sql: "INSERT INTO " + table + " (" + strings.Join(colNames(), ", ") + ")", block: block}, nil
}

func (i *chGoInserter) insert(ctx context.Context, c *batchRows) error {
	b, err := i.conn.PrepareBatch(ctx, i.sql)
	if err != nil {
		return err
	}
	if i.block <= 0 {
		for k, v := range c.Columns(nil, 0, c.Len()) {
			if err := b.Column(k).Append(v); err != nil {
				_ = b.Abort()
				return fmt.Errorf("column %s: %w", schema.LandingColumns[k].Name, err)
			}
		}
		return b.Send()
	}
	for lo := 0; lo < c.Len(); lo += i.block {
		if err := c.AppendTo(b, lo, min(lo+i.block, c.Len())); err != nil {
			_ = b.Abort()
			return err
		}
		if err := b.Flush(); err != nil {
			_ = b.Abort()
			return err
		}
	}
	return b.Send()
}

func (i *chGoInserter) close() { i.conn.Close() }

// chgoInserter uses ch-go: the same Go slices are copied into reused
// proto.Col* columns (the counterpart of clickhouse-go's Append copy), then
// one Do per batch. With direct set, the proto columns are filled once and
// every batch only sends them: the cost left if ingest built its rows
// straight into proto columns instead of its own buffers.
type chgoInserter struct {
	client *ch.Client
	body   string
	input  proto.Input
	direct bool
	filled bool
}

func newChGo(ctx context.Context, addr, table string, direct bool) (*chgoInserter, error) {
	c, err := chgoOpen(ctx, addr)
	if err != nil {
		return nil, err
	}
	in := make(proto.Input, len(schema.LandingColumns))
	for k, col := range schema.LandingColumns {
		var d proto.ColInput
		switch col.Type {
		case "UInt8":
			d = new(proto.ColUInt8)
		case "Int8":
			d = new(proto.ColInt8)
		case "UInt16":
			d = new(proto.ColUInt16)
		case "Int32":
			d = new(proto.ColInt32)
		case "Int64":
			d = new(proto.ColInt64)
		case "UInt32":
			d = new(proto.ColUInt32)
		case "UInt64":
			d = new(proto.ColUInt64)
		case "String":
			d = new(proto.ColStr)
		case "DateTime":
			d = new(proto.ColDateTime)
		case "Array(String)":
			d = proto.NewArray[string](new(proto.ColStr))
		default:
			return nil, fmt.Errorf("ch-go: no column for type %s", col.Type)
		}
		in[k] = proto.InputColumn{Name: col.Name, Data: d}
	}
	return &chgoInserter{
		client: c, input: in, direct: direct,
		body: "INSERT INTO " + table + " (" + strings.Join(colNames(), ", ") + ") VALUES",
	}, nil
}

// fill copies every column of c into the proto columns.
func (i *chgoInserter) fill(c *batchRows) error {
	for k, v := range c.Columns(nil, 0, c.Len()) {
		switch d := i.input[k].Data.(type) {
		case *proto.ColUInt8:
			*d = append((*d)[:0], v.([]uint8)...)
		case *proto.ColInt8:
			*d = append((*d)[:0], v.([]int8)...)
		case *proto.ColUInt16:
			*d = append((*d)[:0], v.([]uint16)...)
		case *proto.ColInt32:
			*d = append((*d)[:0], v.([]int32)...)
		case *proto.ColInt64:
			*d = append((*d)[:0], v.([]int64)...)
		case *proto.ColUInt32:
			*d = append((*d)[:0], v.([]uint32)...)
		case *proto.ColUInt64:
			*d = append((*d)[:0], v.([]uint64)...)
		case *proto.ColStr:
			d.Reset()
			d.AppendArr(v.([]string))
		case *proto.ColDateTime:
			d.Data = d.Data[:0]
			for _, sec := range v.([]int64) {
				d.Data = append(d.Data, proto.DateTime(uint32(sec)))
			}
		case *proto.ColArr[string]:
			d.Reset()
			for _, a := range v.([][]string) {
				d.Append(a)
			}
		default:
			return fmt.Errorf("ch-go: column %s: unhandled %T", schema.LandingColumns[k].Name, d)
		}
	}
	return nil
}

func (i *chgoInserter) insert(ctx context.Context, c *batchRows) error {
	if !i.direct || !i.filled {
		if err := i.fill(c); err != nil {
			return err
		}
		i.filled = true
	}
	return i.client.Do(ctx, ch.Query{Body: i.body, Input: i.input})
}

func (i *chgoInserter) close() { _ = i.client.Close() }

// chVerify reads back what one driver wrote to landing_mt: a digest that
// must be the same for both drivers given the same rows.
func chVerify(ctx context.Context, addr, db string) (string, error) {
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, Protocol: clickhouse.Native})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	// Every landing column enters the digest, each as its own sum of
	// hashes, so a difference names its column.
	sel := []string{"count()"}
	for _, c := range schema.LandingColumns {
		e := c.Name
		switch c.Type {
		case "Array(String)":
			e = "arrayStringConcat(" + e + ", ',')"
		case "DateTime":
			e = "toUInt32(" + e + ")"
		}
		sel = append(sel, "sum(cityHash64("+e+"))")
	}
	sums := make([]uint64, len(sel))
	dst := make([]any, len(sel))
	for k := range sums {
		dst[k] = &sums[k]
	}
	if err := conn.QueryRow(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+db+".landing_mt").Scan(dst...); err != nil {
		return "", err
	}
	digest := fmt.Sprintf("rows=%d", sums[0])
	for k, c := range schema.LandingColumns {
		digest += fmt.Sprintf(" %s=%x", c.Name, sums[k+1])
	}
	if err := conn.Exec(ctx, "TRUNCATE TABLE "+db+".landing_mt"); err != nil {
		return "", err
	}
	return digest, nil
}
