package emit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestUnitDependencies holds the split of issue 27 §5: an agent that
// imports the core for one middleware links neither gRPC, kafka-go,
// Prometheus' client, the decoder (parse) nor the redactor (redact, with
// libphonenumber's metadata); the publisher links no Prometheus or gRPC;
// the interceptors no Kafka or Prometheus. Before the split the core
// imported all of them (410 packages for a one-handler agent). It reads
// the build's own answer, go list -deps, for each package.
func TestUnitDependencies(t *testing.T) {
	const mod = "github.com/errtrail/errtrail/"
	heavy := map[string][]string{
		"grpc":       {"google.golang.org/grpc"},
		"protobuf":   {"google.golang.org/protobuf"},
		"kafka-go":   {"github.com/segmentio/kafka-go"},
		"prometheus": {"github.com/prometheus/"},
		"decoder":    {mod + "parse", mod + "redact", "github.com/nyaruka/phonenumbers"},
	}
	for _, c := range []struct {
		pkg     string
		must    []string // imported: the list is the package's own
		mustNot []string // keys of heavy
	}{
		{mod + "emit", []string{mod + "internal/keep"}, []string{"grpc", "protobuf", "kafka-go", "prometheus", "decoder"}},
		{mod + "emit/kafkapub", []string{mod + "emit", "github.com/segmentio/kafka-go"}, []string{"grpc", "protobuf", "prometheus", "decoder"}},
		{mod + "emit/emitgrpc", []string{mod + "emit", "google.golang.org/grpc"}, []string{"kafka-go", "prometheus", "decoder"}},
		{mod + "emit/emitprom", []string{mod + "emit/kafkapub", "github.com/prometheus/client_golang/prometheus"}, []string{"grpc", "decoder"}},
	} {
		out, err := exec.Command("go", "list", "-deps", c.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		deps := strings.Fields(string(out))
		has := func(prefix string) string {
			for _, d := range deps {
				if d == prefix || strings.HasPrefix(d, prefix) && (strings.HasSuffix(prefix, "/") || strings.HasPrefix(d[len(prefix):], "/")) {
					return d
				}
			}
			return ""
		}
		for _, m := range append([]string{c.pkg}, c.must...) {
			if has(m) == "" {
				t.Errorf("%s: %s is not among its %d dependencies", c.pkg, m, len(deps))
			}
		}
		for _, k := range c.mustNot {
			for _, p := range heavy[k] {
				if d := has(p); d != "" {
					t.Errorf("%s links %s (%s)", c.pkg, d, k)
				}
			}
		}
	}
}
