package otelpipe

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/segmentio/kafka-go"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// The Collector of the test, built from its modules as a distribution
// would be: the OTLP receiver (HTTP, with include_metadata) feeding two
// Kafka exporters, one writing otlp_proto (the default) and one otlp_json,
// each with include_metadata_keys.

// metadataKey is the request header the SDK exporter sends, which the
// receiver keeps as client metadata and the Kafka exporter writes as a
// Kafka header.
const metadataKey = "errtrail-source-id"

type collector struct {
	endpoint string // host:port of the OTLP/HTTP receiver
	stop     func()
}

// startCollector starts the receiver and the exporters to brokers: traces
// in otlp_proto to protoTopic and in otlp_json to jsonTopic.
func startCollector(t *testing.T, brokers []string, protoTopic, jsonTopic string) *collector {
	t.Helper()
	ctx := context.Background()
	host := componenttest.NewNopHost()
	var exps []exporter.Traces
	for _, tc := range []struct{ topic, encoding string }{{protoTopic, "otlp_proto"}, {jsonTopic, "otlp_json"}} {
		f := kafkaexporter.NewFactory()
		cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
		cfg.ClientConfig.Brokers = brokers
		cfg.Traces.Topic = tc.topic
		cfg.Traces.Encoding = tc.encoding
		cfg.IncludeMetadataKeys = []string{metadataKey}
		// No sending queue: ConsumeTraces returns once Kafka has the
		// message, so the test knows when everything was written.
		cfg.QueueBatchConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		if err := cfg.Validate(); err != nil {
			t.Fatalf("kafka exporter config: %v", err)
		}
		exp, err := f.CreateTraces(ctx, exportertest.NewNopSettings(f.Type()), cfg)
		if err != nil {
			t.Fatalf("kafka exporter: %v", err)
		}
		if err := exp.Start(ctx, host); err != nil {
			t.Fatalf("kafka exporter start: %v", err)
		}
		exps = append(exps, exp)
	}
	fanout, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
		for _, e := range exps {
			if err := e.ConsumeTraces(ctx, td); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := ln.Addr().String()
	ln.Close()
	rf := otlpreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig().(*otlpreceiver.Config)
	rcfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	httpCfg := rcfg.Protocols.HTTP.GetOrInsertDefault()
	httpCfg.ServerConfig.NetAddr.Endpoint = endpoint
	httpCfg.ServerConfig.IncludeMetadata = true
	rcv, err := rf.CreateTraces(ctx, receivertest.NewNopSettings(rf.Type()), rcfg, fanout)
	if err != nil {
		t.Fatalf("otlp receiver: %v", err)
	}
	if err := rcv.Start(ctx, host); err != nil {
		t.Fatalf("otlp receiver start: %v", err)
	}
	return &collector{endpoint: endpoint, stop: func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rcv.Shutdown(sctx)
		for _, e := range exps {
			_ = e.Shutdown(sctx)
		}
	}}
}

var _ component.Host = componenttest.NewNopHost()

// createTopic creates topic with one partition on the cluster of broker.
func createTopic(t *testing.T, broker, topic string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := func() error {
			c, err := kafka.Dial("tcp", broker)
			if err != nil {
				return err
			}
			defer c.Close()
			ctl, err := c.Controller()
			if err != nil {
				return err
			}
			cc, err := kafka.Dial("tcp", net.JoinHostPort(ctl.Host, fmt.Sprint(ctl.Port)))
			if err != nil {
				return err
			}
			defer cc.Close()
			return cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: 1})
		}()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create topic %s: %v", topic, err)
		}
		time.Sleep(time.Second)
	}
}

func deleteTopic(broker, topic string) {
	c, err := kafka.Dial("tcp", broker)
	if err != nil {
		return
	}
	defer c.Close()
	ctl, err := c.Controller()
	if err != nil {
		return
	}
	cc, err := kafka.Dial("tcp", net.JoinHostPort(ctl.Host, fmt.Sprint(ctl.Port)))
	if err != nil {
		return
	}
	defer cc.Close()
	_ = cc.DeleteTopics(topic)
}
