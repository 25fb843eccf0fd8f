// Command tap is a reverse proxy in front of an agent that cannot be
// changed: it forwards every request and reply unchanged (streams pass as
// they come; HTTP/2 and gRPC over h2c both ways) and publishes one event
// per error reply to Kafka, as the agent would with package emit.
//
// HTTP, JSON-RPC and SSE replies go through emit.Handler; a gRPC reply is
// read from its trailers (grpc-status, grpc-message,
// grpc-status-details-bin) as they pass. /metrics (the emit counters and
// the errtrail_tap_* counters), /healthz and /readyz are served on
// --metrics.listen-address, apart from the proxied paths. When Kafka is
// down the tap keeps proxying: events are dropped and counted
// (errtrail_emit_dropped_total).
//
// Only the agent's replies are published: the event's endpoint is the
// upstream's, headers the client lists in Connection are not recorded,
// and failures the tap produces (a client's broken, stalled or abandoned
// request, an unreachable upstream) are answered and counted, never
// published (client.go). The server closes idle connections and stalled
// request bodies (--http.idle-timeout, --http.body-read-timeout).
//
// Every flag can also be set from the environment: --foo.bar reads
// ERRTRAIL_TAP_FOO_BAR, and the --kafka.* and --log.* flags, which ingest
// has too, then read ingest's variable (ERRTRAIL_KAFKA_BROKERS, ...).
// flags.go reads the settings, server.go runs.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/errtrail/errtrail/emit"
	"github.com/errtrail/errtrail/emit/kafkapub"
	"github.com/errtrail/errtrail/internal/cmdkit"
)

func main() {
	cmdkit.Main(func(ctx context.Context, args []string, _, stderr io.Writer) int { return run(ctx, args, stderr) })
}

// run reads the settings and proxies until ctx ends. It returns the exit
// status: 0 after a clean stop or --help, 1 when serving failed, 2 for bad
// flags or settings (a --kafka.topic the brokers do not have included).
func run(ctx context.Context, args []string, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cmdkit.ExitCode("tap", err, stderr); !ok {
		return code
	}
	log := o.log.Logger(stderr)
	if err := checkTopic(ctx, o); err != nil {
		fmt.Fprintln(stderr, "tap:", err)
		return 2
	}
	if o.source.Version == "" && o.source.Kind == emit.KindAgent {
		o.source.Version = cardVersion(ctx, o.upstream, http.DefaultClient, 5*time.Second)
		log.Info("agent version", "source.version", o.source.Version, "from", "agent card")
	}
	if err := serve(ctx, o, log, nil); err != nil {
		log.Error("tap failed", "err", err)
		return 1
	}
	return 0
}

// checkTopic refuses a topic the brokers say does not exist: every event
// would be dropped, and topics are not created for you. Kafka that cannot
// be reached (within 10s) is no reason not to start: the tap proxies and
// counts the drops, as it does when Kafka goes down later.
func checkTopic(ctx context.Context, o *options) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := kafkapub.CheckTopic(ctx, kafkapub.Config{Brokers: o.brokers, Topic: o.topic}); errors.Is(err, kafkapub.ErrTopicMissing) {
		return err
	}
	return nil
}
