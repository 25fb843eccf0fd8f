package emittest

import (
	"testing"

	"github.com/errtrail/errtrail/internal/stackload"
)

// KafkaTopic makes a fresh topic on the stack's broker, dropped at the end.
func KafkaTopic(t *testing.T) ([]string, string) { return stackload.NewTopic(t, "errtrail.emit-test.") }

// ReadEvents reads n messages of the topic back from Kafka.
func ReadEvents(t *testing.T, brokers []string, topic string, n int) [][]byte {
	return stackload.ReadTopic(t, brokers, topic, n)
}
