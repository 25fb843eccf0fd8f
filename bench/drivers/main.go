// Command driverbench measures the CPU the ingester's two drivers spend per
// row and per message against the local stack, next to the alternatives
// (ch-go for ClickHouse, franz-go for Kafka). See run.sh and
// docs/performance.md, "Ingest drivers (measured, not adopted)".
//
//	driverbench ch-setup  -db DB
//	driverbench ch-probe           does ch-go talk to this server (as it comes, and through shim.go)?
//	driverbench ch        -db DB -driver clickhouse-go|clickhouse-go-blocks|ch-go|ch-go-direct [-table landing_null] [-batches 20] [-rows 50000] [-block 1024]
//	driverbench ch-verify -db DB    the same batch through each driver into landing_mt: the stored rows must agree
//	driverbench ch-drop   -db DB
//	driverbench kafka-drop -topic T -group G1,G2,...
//	driverbench kafka     -topic T -group G -driver kafka-go|franz-go [-n 1000000] [-commit-every 50000]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: driverbench ch-setup|ch|ch-verify|ch-drop|kafka [flags]")
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	chAddr := fs.String("clickhouse", env("ERRTRAIL_CLICKHOUSE_ADDR", "127.0.0.1:19000"), "ClickHouse native address")
	brokers := fs.String("brokers", env("ERRTRAIL_KAFKA_BROKERS", "127.0.0.1:19092"), "Kafka brokers")
	db := fs.String("db", "errtrail_driverbench", "ClickHouse database (created by ch-setup, dropped by ch-drop)")
	table := fs.String("table", "landing_null", "table in -db")
	driver := fs.String("driver", "", "clickhouse-go, clickhouse-go-blocks, ch-go, ch-go-direct | kafka-go, franz-go")
	batches := fs.Int("batches", 20, "ch: measured batches")
	warm := fs.Int("warmup", 2, "ch: unmeasured batches first")
	rows := fs.Int("rows", 50000, "ch: rows per batch")
	block := fs.Int("block", 1024, "ch: rows per block for -driver clickhouse-go-blocks (ingest's default)")
	topic := fs.String("topic", "", "kafka: topic to consume")
	group := fs.String("group", "", "kafka: consumer group (new for each run)")
	n := fs.Int("n", 1_000_000, "kafka: messages to consume")
	every := fs.Int("commit-every", 50_000, "kafka: messages per commit")
	shim := fs.Bool("chgo-shim", true, "ch-go: rewrite the server's revision 54412 to 54420 (shim.go)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	_ = fs.Parse(os.Args[2:])
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	chgoShim = *shim
	for _, a := range []string{*chAddr, *brokers} {
		for _, h := range strings.Split(a, ",") {
			if !strings.HasPrefix(h, "127.0.0.1:") && !strings.HasPrefix(h, "localhost:") {
				fail(fmt.Errorf("only loopback addresses: %q", h))
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var err error
	switch cmd {
	case "ch-setup":
		err = chSetup(ctx, *chAddr, *db)
	case "ch-probe":
		chProbe(ctx, *chAddr)
	case "ch-drop":
		err = chDrop(ctx, *chAddr, *db)
	case "ch":
		err = runCH(ctx, *chAddr, *db+"."+*table, *driver, *rows, *block, *warm, *batches)
	case "ch-verify":
		err = verifyCH(ctx, *chAddr, *db, *rows)
	case "kafka-drop":
		var gs []string
		if *group != "" {
			gs = strings.Split(*group, ",")
		}
		err = kafkaDrop(ctx, strings.Split(*brokers, ",")[0], *topic, gs)
	case "kafka":
		bs := strings.Split(*brokers, ",")
		switch *driver {
		case "kafka-go":
			err = consumeKafkaGo(ctx, bs, *topic, *group, *n, *every)
		case "franz-go":
			err = consumeFranz(ctx, bs, *topic, *group, *n, *every)
		default:
			err = fmt.Errorf("kafka: unknown -driver %q", *driver)
		}
		if err == nil {
			var c int64
			if c, err = committed(ctx, bs[0], *topic, *group); err == nil {
				fmt.Printf("COMMITTED driver=%s group=%s sum_of_committed_offsets=%d\n", *driver, *group, c)
			}
		}
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fail(err)
	}
}

func runCH(ctx context.Context, addr, table, driver string, rows, block, warm, batches int) error {
	c, err := makeRows(rows, "errtrail.replies", false)
	if err != nil {
		return err
	}
	var ins inserter
	switch driver {
	case "clickhouse-go":
		ins, err = newClickhouseGo(addr, table, 0)
	case "clickhouse-go-blocks":
		ins, err = newClickhouseGo(addr, table, block)
	case "ch-go":
		ins, err = newChGo(ctx, addr, table, false)
	case "ch-go-direct":
		ins, err = newChGo(ctx, addr, table, true)
	default:
		err = fmt.Errorf("ch: unknown -driver %q", driver)
	}
	if err != nil {
		return err
	}
	defer ins.close()
	for i := 0; i < warm; i++ {
		if err := ins.insert(ctx, c); err != nil {
			return fmt.Errorf("%s warm-up insert: %w", driver, err)
		}
	}
	a := take()
	for i := 0; i < batches; i++ {
		if err := ins.insert(ctx, c); err != nil {
			return fmt.Errorf("%s insert %d: %w", driver, i, err)
		}
	}
	b := take()
	report("ch", driver, batches*c.Len(), "row", a, b,
		fmt.Sprintf("table=%s batch_rows=%d dead_rows_per_batch=%d chgo_shim_used=%v", table, c.Len(), c.dead, chgoPatched))
	return nil
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "driverbench:", err)
	os.Exit(1)
}

// verifyCH inserts one batch with each driver into landing_mt and compares
// digests of what the server stored. makeRows gives some rows array values
// and makes some dead-letter rows, so every column type carries data.
func verifyCH(ctx context.Context, addr, db string, rows int) error {
	c, err := makeRows(rows, "errtrail.replies", true)
	if err != nil {
		return err
	}
	var first string
	for _, d := range []string{"clickhouse-go", "clickhouse-go-blocks", "ch-go", "ch-go-direct"} {
		var ins inserter
		switch d {
		case "clickhouse-go":
			ins, err = newClickhouseGo(addr, db+".landing_mt", 0)
		case "clickhouse-go-blocks":
			ins, err = newClickhouseGo(addr, db+".landing_mt", 1000) // several blocks even for the verify batch
		default:
			ins, err = newChGo(ctx, addr, db+".landing_mt", d == "ch-go-direct")
		}
		if err != nil {
			return err
		}
		err = ins.insert(ctx, c)
		ins.close()
		if err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		dig, err := chVerify(ctx, addr, db)
		if err != nil {
			return err
		}
		fmt.Printf("VERIFY driver=%s %s\n", d, dig)
		if first == "" {
			first = dig
		} else if dig != first {
			return fmt.Errorf("VERIFY: %s stored different rows than clickhouse-go", d)
		}
	}
	fmt.Println("VERIFY ok: every driver stored the same rows")
	return nil
}
