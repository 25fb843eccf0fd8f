package loadgen

import (
	"io"

	"github.com/pierrec/lz4/v4"
	"github.com/segmentio/kafka-go/compress"
)

// Kafka's LZ4 batches are LZ4 frames, and producers differ in one flag of
// the frame: kafka-go (and so this tool by default) sets the content
// checksum, an xxHash32 of the uncompressed batch that every consumer then
// computes again; the Java client leaves it out (its Lz4BlockOutputStream
// writes a frame descriptor without it) and relies on the batch's CRC32C.
// The consumer's cost differs accordingly (docs/performance.md), so the
// tool can write either kind.

// lz4NoContentChecksum is a kafka-go codec that writes LZ4 frames without
// the content checksum and reads every kind.
type lz4NoContentChecksum struct{}

func (lz4NoContentChecksum) Code() int8   { return int8(compress.Lz4) }
func (lz4NoContentChecksum) Name() string { return "lz4" }

func (lz4NoContentChecksum) NewReader(r io.Reader) io.ReadCloser {
	return io.NopCloser(lz4.NewReader(r))
}

func (lz4NoContentChecksum) NewWriter(w io.Writer) io.WriteCloser {
	z := lz4.NewWriter(w)
	if err := z.Apply(lz4.ChecksumOption(false)); err != nil {
		panic("loadgen: lz4 option: " + err.Error()) // only fails once the writer has written
	}
	return z
}

// WriteLZ4WithoutContentChecksum makes every kafka-go writer in this
// process write LZ4 batches as the Java client does, without the frame's
// content checksum. kafka-go keeps its codecs in one process-wide table, so
// this is a process-wide switch, for the command (--lz4-content-checksum
// false), not for a library caller that shares the process with others.
func WriteLZ4WithoutContentChecksum() {
	compress.Codecs[compress.Lz4] = lz4NoContentChecksum{}
}
