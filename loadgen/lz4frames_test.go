package loadgen

import (
	"bytes"
	"io"
	"testing"

	kafkalz4 "github.com/segmentio/kafka-go/compress/lz4"
)

// lz4Frame compresses data with a codec's writer and returns the frame.
func lz4Frame(t *testing.T, newWriter func(io.Writer) io.WriteCloser, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newWriter(&buf)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// contentChecksumFlag reads the C.Checksum bit of an LZ4 frame's FLG byte
// (the byte after the 4-byte magic number; bit 2).
func contentChecksumFlag(t *testing.T, frame []byte) bool {
	t.Helper()
	if len(frame) < 5 || !bytes.Equal(frame[:4], []byte{0x04, 0x22, 0x4d, 0x18}) {
		t.Fatalf("not an LZ4 frame: % x", frame[:min(len(frame), 8)])
	}
	return frame[4]&0x04 != 0
}

// TestLZ4FramesWithoutContentChecksum checks that kafka-go's own codec sets
// the content checksum (the cost the option exists to show), that ours
// leaves it out, and that kafka-go's reader, which ingest uses, reads our
// frames back byte for byte.
func TestLZ4FramesWithoutContentChecksum(t *testing.T) {
	data := bytes.Repeat([]byte(`{"v":1,"event_id":"lg-1","observed_at":1764489600000,"reply":{"http_status":429}}`+"\n"), 500)
	var kafkaGo kafkalz4.Codec
	if !contentChecksumFlag(t, lz4Frame(t, kafkaGo.NewWriter, data)) {
		t.Fatal("kafka-go's lz4 codec wrote no content checksum; the option's premise is gone")
	}
	frame := lz4Frame(t, lz4NoContentChecksum{}.NewWriter, data)
	if contentChecksumFlag(t, frame) {
		t.Fatal("frame has a content checksum")
	}
	r := kafkaGo.NewReader(bytes.NewReader(frame))
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("round trip: %d bytes back, want %d", len(got), len(data))
	}
}
