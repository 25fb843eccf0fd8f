package testenv

import (
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// KafkaTimeout bounds a test's request to Kafka, the connection's setup
// included: a hang guard, like CHDialTimeout.
const KafkaTimeout = 30 * time.Second

// KafkaClient returns a client of the brokers whose requests and whose
// connection setup are bounded by KafkaTimeout. A kafka.Client without a
// Transport of its own gives the setup (dial and API versions) the default
// transport's 5 s whatever its Timeout, and in CI's stress runs the shared
// machine has stalled the broker and ClickHouse for 6 s at once. Its idle
// connections are closed when the test ends.
//
// Not for creating a topic that a kafka.Writer of the test then writes: a
// writer on the default transport learns a new topic from that transport's
// metadata cache, which only a CreateTopics through it refreshes at once
// (loadgen.EnsureTopic).
func KafkaClient(t testing.TB, brokers []string) *kafka.Client {
	tr := &kafka.Transport{DialTimeout: KafkaTimeout}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: KafkaTimeout, Transport: tr}
}
