package cmdkit

import (
	"errors"

	"github.com/errtrail/errtrail/internal/cliflags"
)

// DefaultKafkaBrokers is the default of --kafka.brokers: the local stack's
// broker.
const DefaultKafkaBrokers = "127.0.0.1:19092"

// Kafka is the --kafka.brokers flag, which every command that reaches
// Kafka has. Check fills List.
type Kafka struct {
	Brokers *string  // --kafka.brokers, as given (comma-separated)
	List    []string // the brokers, split and trimmed
}

// AddKafka registers --kafka.brokers on f with its default. envPrefix, if
// not empty, names its fixed variable (envPrefix + "KAFKA_BROKERS").
func AddKafka(f *cliflags.Flags, envPrefix string) *Kafka {
	return &Kafka{Brokers: f.String("kafka.brokers", envKey(envPrefix, "kafka.brokers"), DefaultKafkaBrokers,
		"Kafka bootstrap brokers, comma-separated")}
}

// Check reports a --kafka.brokers without a broker.
func (k *Kafka) Check() error {
	if k.List = cliflags.SplitList(*k.Brokers); len(k.List) == 0 {
		return errors.New("--kafka.brokers names no broker")
	}
	return nil
}
