// Package decodecli implements `ingest decode FILE...`: decode replies kept
// in files (a raw HTTP/1.1 response, a gRPC reply text form or event JSON)
// and print one JSON line per input, in input order. A file that cannot be
// decoded still gets its line, with the error and its reason, so output and
// input stay aligned. Support staff and golden tests use it.
package decodecli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/errtrail/errtrail/internal/redactkey"
	"github.com/errtrail/errtrail/parse"
)

// failure is the line printed for an input that could not be decoded.
type failure struct {
	File   string `json:"file"`
	Error  string `json:"error"`
	Reason string `json:"reason"`
	Path   string `json:"path,omitempty"`
	Offset *int   `json:"offset,omitempty"`
}

// Run executes the decode subcommand and returns the process exit code:
// 0 when every input decoded, 1 when some did not, 2 on usage errors.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	maxBytes := fs.Int("max-bytes", 1<<20, "largest input accepted, in bytes")
	keyFile := fs.String("redact.key-file", os.Getenv("ERRTRAIL_REDACT_KEY_FILE"), "the deployment's redaction key, so replaced ids hash as in the stored rows (default: "+redactkey.DefaultPath()+" when it exists; else hashes are unkeyed)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ingest decode [flags] [FILE...]\n\nDecodes each FILE (stdin when none) and prints one JSON record per line.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	var key []byte
	if *keyFile != "" || fileExists(redactkey.DefaultPath()) {
		k, _, _, err := redactkey.Load(*keyFile, false)
		if err != nil {
			fmt.Fprintln(stderr, "ingest decode:", err)
			return 2
		}
		key = k
	}
	d := parse.NewDecoder(parse.Options{MaxBytes: *maxBytes, HashKey: key})
	var rec parse.Record
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	code := 0
	for _, name := range files {
		data, err := readInput(name, stdin, *maxBytes)
		if err == nil {
			err = d.DecodeMessage(data, nil, 0, &rec)
		}
		if err != nil {
			code = 1
			enc.Encode(failureOf(name, err))
			continue
		}
		enc.Encode(&rec)
	}
	return code
}

func readInput(name string, stdin io.Reader, max int) ([]byte, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	// Read one byte past the limit so the decoder reports too_large.
	return io.ReadAll(io.LimitReader(r, int64(max)+1))
}

func failureOf(name string, err error) failure {
	f := failure{File: name, Error: err.Error(), Reason: "io"}
	var de *parse.DecodeError
	if errors.As(err, &de) {
		f.Reason = string(de.Reason)
		f.Path = de.Path
		if de.Offset >= 0 {
			off := de.Offset
			f.Offset = &off
		}
	}
	return f
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
