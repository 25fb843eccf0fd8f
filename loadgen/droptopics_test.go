package loadgen

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/errtrail/errtrail/internal/testenv"
	"github.com/segmentio/kafka-go"
)

// TestDropTopics creates three topics on the real broker and checks that
// DropTopics deletes the named one and those with the prefix, leaves the
// others, and takes a name the broker does not have without an error.
func TestDropTopics(t *testing.T) {
	brokers := strings.Split(testenv.Kafka(t), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := "loadgen.droptest." + strconv.FormatInt(time.Now().UnixNano(), 36)
	byPrefix1, byPrefix2, named, kept := base+".p.1", base+".p.2", base+".named", base+".kept"
	for _, tp := range []string{byPrefix1, byPrefix2, named, kept} {
		if err := EnsureTopic(ctx, brokers, tp, 1); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = DropTopics(context.Background(), brokers, "", []string{kept}) })

	got, err := DropTopics(ctx, brokers, base+".p.", []string{named, base + ".never-made"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{named, byPrefix1, byPrefix2}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("deleted %v, want %v", got, want)
	}

	// Deletion is asynchronous on the broker: wait until metadata agrees.
	c := testenv.KafkaClient(t, brokers)
	for {
		md, err := c.Metadata(ctx, &kafka.MetadataRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, tp := range md.Topics {
			if strings.HasPrefix(tp.Name, base) {
				left = append(left, tp.Name)
			}
		}
		if slices.Equal(left, []string{kept}) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topics left under %s: %v, want only %s", base, left, kept)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
