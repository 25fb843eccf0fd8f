package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenInputs lists every reply kept under testdata: the seed examples, the
// hand-made cases and the corpus captured from real SDKs.
func goldenInputs(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"testdata/seeds", "testdata/cases", "testdata/corpus"} {
		filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			switch filepath.Ext(p) {
			case ".http", ".grpc", ".json":
				if !strings.HasSuffix(p, ".golden.json") && !strings.HasSuffix(p, ".req.json") {
					files = append(files, p)
				}
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatal("no golden inputs under testdata/")
	}
	return files
}

// contextOf returns the Kafka headers a tap would have sent with a captured
// reply: the JSON-RPC method of the request kept beside it (<case>.req), so
// the decoder sees what a real event carries.
func contextOf(input string) []MsgHeader {
	req, err := os.ReadFile(strings.TrimSuffix(input, filepath.Ext(input)) + ".req")
	if err != nil {
		return nil
	}
	if i := bytes.Index(req, []byte("\r\n\r\n")); i >= 0 {
		req = req[i+4:]
	}
	var body struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(req, &body) != nil || body.Method == "" {
		return nil
	}
	return []MsgHeader{{Key: "errtrail-method", Value: []byte(body.Method)}}
}

// decodeLine renders what `ingest decode` prints for one input.
func decodeLine(d *Decoder, data []byte, hs []MsgHeader) []byte {
	var rec Record
	err := d.DecodeMessage(data, hs, 1764489600000, &rec)
	var out []byte
	if err != nil {
		var de *DecodeError
		errors.As(err, &de)
		out, _ = json.Marshal(map[string]any{"error": err.Error(), "reason": de.Reason, "path": de.Path})
	} else {
		out, _ = rec.MarshalJSON()
	}
	var pretty bytes.Buffer
	json.Indent(&pretty, out, "", "  ")
	pretty.WriteByte('\n')
	return pretty.Bytes()
}

// TestGolden decodes every input and compares the record with the golden
// file beside it. Run `go test ./parse -run TestGolden -update` to refresh
// after a deliberate change, and review the diff.
func TestGolden(t *testing.T) {
	d := NewDecoder(Options{})
	for _, in := range goldenInputs(t) {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeLine(d, data, contextOf(in))
		golden := strings.TrimSuffix(in, filepath.Ext(in)) + ".golden.json"
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Errorf("%s: no golden file (run with -update): %v", in, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: record differs from %s\ngot:\n%s\nwant:\n%s", in, golden, got, want)
		}
	}
}
