// Command loadgen publishes realistic agent error replies to Kafka from
// scenario files, simulating each agent's per-caller limiter. See package
// loadgen for the scenario format and the library API.
//
//	loadgen run SCENARIO [flags]   play a scenario (a file or a shipped name), paced
//	                               (--history 1h: an hour of its baseline first, at full speed)
//	loadgen demo [flags]           the shipped demo scenario (~75 s, mixed faults, 1% poison)
//	loadgen flood [flags]          unpaced, for throughput: --events N of --scenario (steady)
//	loadgen list                   the shipped scenarios
//	loadgen drop-topics [--prefix P] [TOPIC...]
//	                               delete topics (e.g. a measurement's floods)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/errtrail/errtrail/internal/cliflags"
	"github.com/errtrail/errtrail/internal/cmdkit"
	"github.com/errtrail/errtrail/loadgen"
)

func main() { cmdkit.Main(cli) }

// cli runs a command and returns the exit status: 0 done (or help), 1
// failed, 2 a bad command line.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	var err error
	switch cmd := args[0]; cmd {
	case "run", "demo", "flood":
		err = run(ctx, cmd, args[1:], stderr)
	case "list":
		if len(args) > 1 {
			fmt.Fprint(stderr, "usage: loadgen list\n\nLists the shipped scenarios (loadgen run NAME plays one); it takes no flags.\n")
			if args[1] == "-h" || args[1] == "--help" || args[1] == "-help" {
				return 0
			}
			return 2
		}
		for _, n := range loadgen.BuiltinNames() {
			sc, err := loadgen.Builtin(n)
			if err != nil {
				fmt.Fprintf(stdout, "%-22s INVALID: %v\n", n, err)
				continue
			}
			fmt.Fprintf(stdout, "%-22s %5.0f s  %d agents, %d callers\n", n, sc.Total().Seconds(), len(sc.Agents), len(sc.Callers))
		}
	case "drop-topics":
		err = dropTopics(ctx, args[1:], stderr)
	case "-h", "--help", "-help", "help":
		usage(stdout)
	default:
		fmt.Fprintf(stderr, "loadgen: unknown command %q\n", cmd)
		usage(stderr)
		return 2
	}
	switch {
	case errors.Is(err, errUsage):
		return 2 // the flag package said why
	case err != nil:
		fmt.Fprintln(stderr, "loadgen:", err)
		return 1
	}
	return 0
}

// errUsage is a command line the flag package refused (and explained).
var errUsage = errors.New("bad command line")

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  loadgen run SCENARIO [flags]   play a scenario file or shipped name (see list), paced;
                                 --history 1h publishes an hour of its baseline first, at full speed
  loadgen demo [flags]           the shipped demo scenario (~75 s, everything mixed, 1% poison)
  loadgen flood [flags]          as fast as possible: --events N of --scenario (default steady)
  loadgen list                   shipped scenarios
  loadgen drop-topics [--prefix P] [TOPIC...]
                                 delete the named topics and those starting with P

"loadgen COMMAND -h" lists that command's flags.
`)
}

// about is what each command's -h says above its flags.
var about = map[string]string{
	"run":         "usage: loadgen run SCENARIO [flags]\n\nPlays SCENARIO (a scenario file, or a shipped name: loadgen list), paced by --speed.",
	"demo":        "usage: loadgen demo [flags]\n\nPlays the shipped demo scenario (~75 s, everything mixed, 1% poison), paced by --speed.",
	"flood":       "usage: loadgen flood [flags]\n\nPublishes --events messages of --scenario, looped, as fast as Kafka takes them (unpaced).",
	"drop-topics": "usage: loadgen drop-topics [--prefix P] [TOPIC...]\n\nDeletes the named topics, and those whose name starts with --prefix.",
}

// flagUsage prints a command's help: what it does and its own flags.
func flagUsage(fs *flag.FlagSet, cmd string) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "%s\n\nFlags:\n", about[cmd])
		fs.PrintDefaults()
	}
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// dropTopics deletes topics a load run made. Without --prefix only the
// named topics go; an empty prefix never matches everything.
func dropTopics(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadgen drop-topics", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = flagUsage(fs, "drop-topics")
	kafka := cmdkit.AddKafka(cliflags.New(fs), "ERRTRAIL_")
	prefix := fs.String("prefix", "", "also delete every topic whose name starts with this")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if *prefix == "" && fs.NArg() == 0 {
		return errors.New("drop-topics: name topics or give --prefix")
	}
	if err := kafka.Check(); err != nil {
		return err
	}
	dropped, err := loadgen.DropTopics(ctx, kafka.List, *prefix, fs.Args())
	for _, t := range dropped {
		fmt.Println("deleted", t)
	}
	return err
}

func run(ctx context.Context, cmd string, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadgen "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = flagUsage(fs, cmd)
	paced := cmd != "flood"
	// Each command registers its own flags only; the others' stay at
	// these values.
	speed, maxEvents, history := new(float64), new(int64), new(time.Duration)
	*speed = 1
	events, scenario := new(int64), new(string)
	kafka := cmdkit.AddKafka(cliflags.New(fs), "ERRTRAIL_")
	brokers := kafka.Brokers
	topic := fs.String("kafka.topic", env("ERRTRAIL_KAFKA_TOPIC", loadgen.DefaultTopic), "topic to publish to (env ERRTRAIL_KAFKA_TOPIC)")
	clock := fs.String("clock", "real", "observed_at: real (wall time at which the event is due; windows shrink by --speed) or scenario (start + scenario time; gaps keep scenario length)")
	duration := fs.Duration("duration", 0, "stop after the scenario played this much real time (0: at its end; the history does not count)")
	scale := fs.Float64("scale", 1, "multiply every caller's request rate")
	manifest := fs.String("manifest", "", "write a JSON manifest of what was produced to this file")
	out := fs.String("out", "", "write messages to this file ('-': stdout) instead of Kafka, one per line")
	every := fs.Duration("progress", 2*time.Second, "progress line interval (0: none)")
	bodyForm := fs.String("body-form", "string", "how reply bodies are published: string (reply.body), json (JSON bodies as reply.body_json) or mixed")
	noCompress := fs.Bool("no-compress", false, "do not compress Kafka batches (lz4 by default; the over-1-MiB poison then needs a broker with message.max.bytes above it)")
	lz4Sum := fs.Bool("lz4-content-checksum", true, "write LZ4 batches with the frame's content checksum, as kafka-go does (false: without it, as the Java client does; see docs/performance.md)")
	batch := fs.Int("batch", 1000, "kafka-go writer batch size")
	pad := fs.Int("pad-bytes", 0, "add a top-level \"x_pad\" field of this many bytes to every valid event (ignored by decoders; for measuring large messages)")
	if paced {
		fs.Float64Var(speed, "speed", 1, "run scenario time this many times faster than real time")
		fs.Int64Var(maxEvents, "max-events", 0, "stop after this many messages (0: no bound)")
		fs.DurationVar(history, "history", 0, "first publish this much of the scenario's baseline, observed from this long ago up to the scenario's start, as fast as Kafka takes it "+
			"(e.g. 1h). Baseline: first phase's rates, retry policies kept, no overload/limit/bare500 fault, gateways pass replies unchanged, "+
			"no runaway, bursts or poison (go doc loadgen, History). Needs --speed > 0 or --clock scenario; at --speed S it holds S× as much baseline")
	} else {
		fs.Int64Var(events, "events", 1_000_000, "messages to send")
		fs.StringVar(scenario, "scenario", "steady", "scenario to loop")
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}

	cfg := loadgen.Config{
		Brokers: cliflags.SplitList(*brokers), Topic: *topic, Speed: *speed, Clock: *clock,
		MaxEvents: *maxEvents, Duration: *duration, History: *history, Scale: *scale, Progress: os.Stderr,
		ProgressEvery: *every, Compression: !*noCompress, BatchSize: *batch, BodyForm: *bodyForm,
		PadBytes: *pad,
	}
	switch *bodyForm {
	case loadgen.BodyString, loadgen.BodyJSON, loadgen.BodyMixed:
	default:
		return fmt.Errorf("--body-form must be string, json or mixed, not %q", *bodyForm)
	}
	if *every <= 0 {
		cfg.Progress = nil
	}
	if !*lz4Sum {
		loadgen.WriteLZ4WithoutContentChecksum()
	}
	var name string
	switch cmd {
	case "run":
		if len(positional) != 1 {
			return fmt.Errorf("run: want one SCENARIO (a file or one of %s)", strings.Join(loadgen.BuiltinNames(), ", "))
		}
		name = positional[0]
	case "demo":
		name = "demo"
	case "flood":
		name = *scenario
		cfg.Speed, cfg.Loop, cfg.MaxEvents = 0, true, *events
		if cfg.Duration == 0 {
			cfg.Duration = 10 * time.Minute // a flood always ends
		}
	}
	sc, err := loadgen.Resolve(name)
	if err != nil {
		return err
	}
	cfg.Scenario = sc
	if *out != "" {
		w := os.Stdout
		if *out != "-" {
			f, err := os.Create(*out)
			if err != nil {
				return err
			}
			defer f.Close()
			w = f
		}
		cfg.Output = w
	}
	target := "kafka " + *brokers + " topic " + *topic
	if cfg.Output != nil {
		target = "file " + *out
	}
	hist := ""
	if cfg.History > 0 {
		hist = ", after " + cfg.History.String() + " of history"
	}
	fmt.Fprintf(os.Stderr, "loadgen: %s %s (%.0f s of scenario time, speed %v, clock %s%s) to %s\n",
		cmd, sc.Name, sc.Total().Seconds(), cfg.Speed, cfg.Clock, hist, target)
	rep, err := loadgen.Run(ctx, cfg)
	if rep != nil {
		rep.WriteText(os.Stderr)
		if *manifest != "" {
			if merr := rep.WriteManifest(*manifest); merr != nil {
				return merr
			}
			fmt.Fprintf(os.Stderr, "  manifest: %s\n", *manifest)
		}
	}
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted; the report counts what was acknowledged")
	}
	return err
}
