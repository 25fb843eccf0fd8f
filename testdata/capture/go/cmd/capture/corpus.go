package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// corpus writes captures for one SDK into <root>/<dir>/ and records one
// row per case in <dir>/cases.tsv (assembled into INDEX.md by the run script).
// The seventh column, `accepted`, is written by hand (why the decoder's
// record may differ from `expected`, see parse/corpus_expected_test.go); a
// recapture carries it over from the previous cases.tsv by file name.
type corpus struct {
	root, dir, sdk, version string
	rows                    []string
	failed                  []string
	accepted                map[string]string // file -> accepted reason, from the previous cases.tsv
}

const casesHeader = "sdk\tversion\tbinding\tfile\tprovoked\texpected\taccepted\n"

// readAccepted returns the `accepted` column of an existing cases.tsv keyed
// by the file column; nothing when there is no such file or column.
func readAccepted(path string) map[string]string {
	m := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return m
	}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) < 7 || f[6] == "" {
			continue
		}
		m[f[3]] = f[6]
	}
	return m
}

func newCorpus(root, dir, sdk, version string) *corpus {
	p := filepath.Join(root, dir)
	if err := os.MkdirAll(p, 0o755); err != nil {
		panic(err)
	}
	accepted := readAccepted(filepath.Join(p, "cases.tsv"))
	// Remove only what this harness writes: other tools keep their own
	// files (e.g. golden records) beside the captures.
	for _, pat := range []string{"*.http", "*.grpc", "*.req", "cases.tsv", "FAILED.txt"} {
		old, _ := filepath.Glob(filepath.Join(p, pat))
		for _, f := range old {
			_ = os.Remove(f)
		}
	}
	return &corpus{root: root, dir: dir, sdk: sdk, version: version, accepted: accepted}
}

// caseInfo describes one capture for the index.
type caseInfo struct {
	name     string // file stem
	binding  string // jsonrpc | rest | grpc | jsonrpc-sse | rest-sse | grpc-stream | mcp-http
	provoked string // what was done to provoke it
	expect   string // expected A2A/MCP error name and code, or "-" for a non-error control
}

func clean(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) }

func (c *corpus) save(ci caseInfo, ext string, req, resp []byte) {
	base := filepath.Join(c.root, c.dir, ci.name)
	must(os.WriteFile(base+".req", req, 0o644))
	must(os.WriteFile(base+"."+ext, resp, 0o644))
	file := ci.name + "." + ext
	c.rows = append(c.rows, strings.Join([]string{c.sdk, c.version, ci.binding, file, clean(ci.provoked), clean(ci.expect), c.accepted[file]}, "\t"))
	fmt.Printf("  %-8s %s.%s (%d bytes)\n", c.dir, ci.name, ext, len(resp))
}

func (c *corpus) fail(ci caseInfo, err error) {
	msg := fmt.Sprintf("%s: %v", ci.name, err)
	c.failed = append(c.failed, msg)
	fmt.Printf("  FAILED %s\n", msg)
}

// http sends one raw HTTP/1.1 request and stores the reply bytes verbatim.
func (c *corpus) http(ci caseInfo, addr, method, path string, headers [][2]string, body []byte) []byte {
	req := httpRequest(method, addr, path, headers, body)
	resp, err := rawHTTP(addr, req, 20e9)
	if err != nil {
		c.fail(ci, err)
		return nil
	}
	c.save(ci, "http", req, resp)
	return resp
}

// grpc performs one raw gRPC call and stores the header/trailer text form.
// The .req file holds the :path, metadata and the request message as text.
func (c *corpus) grpc(ci caseInfo, addr, path string, md [][2]string, body []byte, reqText string) *grpcReply {
	r, err := rawGRPC(addr, path, md, body)
	if err != nil && (r == nil || len(r.Fields) == 0) {
		c.fail(ci, err)
		return nil
	}
	var req strings.Builder
	fmt.Fprintf(&req, ":path: %s\n", path)
	for _, m := range md {
		fmt.Fprintf(&req, "%s: %s\n", m[0], m[1])
	}
	fmt.Fprintf(&req, "\n%s\n", reqText)
	out := r.Text()
	if n := len(r.Messages); n > 0 {
		ci.provoked += fmt.Sprintf(" [reply also carried %d response message(s) before the trailers]", n)
	}
	if r.RST != "" {
		ci.provoked += " [stream reset: " + r.RST + "]"
	}
	c.save(ci, "grpc", []byte(req.String()), []byte(out))
	return r
}

func (c *corpus) finish() {
	p := filepath.Join(c.root, c.dir, "cases.tsv")
	must(os.WriteFile(p, []byte(casesHeader+strings.Join(c.rows, "\n")+"\n"), 0o644))
	if len(c.failed) > 0 {
		must(os.WriteFile(filepath.Join(c.root, c.dir, "FAILED.txt"), []byte(strings.Join(c.failed, "\n")+"\n"), 0o644))
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
