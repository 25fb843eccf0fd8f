package docsnippets

import (
	"bufio"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Snippet is one ```go block of a Markdown file.
type Snippet struct {
	File string // the Markdown file, as given to Extract
	Line int    // the line of the block's first line of code
	Code string
}

// Extract returns the ```go blocks of a Markdown text, in order. A block
// left open at the end is an error.
func Extract(file, markdown string) ([]Snippet, error) {
	var out []Snippet
	var cur *Snippet
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(markdown))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.TrimSpace(line)
		switch {
		case cur == nil && fence == "```go":
			cur = &Snippet{File: file, Line: n + 1}
			b.Reset()
		case cur != nil && fence == "```":
			cur.Code = b.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a ```go block is not closed", file, cur.Line-1)
	}
	return out, nil
}

// Imports are the packages a fragment may name without importing them.
var Imports = map[string]string{
	"context":    "context",
	"errors":     "errors",
	"fmt":        "fmt",
	"log":        "log",
	"slog":       "log/slog",
	"net":        "net",
	"http":       "net/http",
	"os":         "os",
	"strings":    "strings",
	"time":       "time",
	"emit":       "github.com/errtrail/errtrail/emit",
	"emitgrpc":   "github.com/errtrail/errtrail/emit/emitgrpc",
	"emitprom":   "github.com/errtrail/errtrail/emit/emitprom",
	"kafkapub":   "github.com/errtrail/errtrail/emit/kafkapub",
	"prometheus": "github.com/prometheus/client_golang/prometheus",
	"promhttp":   "github.com/prometheus/client_golang/prometheus/promhttp",
	"grpc":       "google.golang.org/grpc",
	"insecure":   "google.golang.org/grpc/credentials/insecure",
	"metadata":   "google.golang.org/grpc/metadata",
	"trace":      "go.opentelemetry.io/otel/trace",
}

var (
	fragmentMark = regexp.MustCompile(`^//\s*fragment\((.*)\)\s*$`)
	qualified    = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Z]`)
	packageLine  = regexp.MustCompile(`(?m)^package [a-z_][a-z0-9_]*\s*$`)
)

// Program turns a snippet into the text of a Go file: a program as it is,
// a fragment wrapped in a function, both with //line directives that map
// the code back to the Markdown lines. It fails for a block that is
// neither.
func Program(s Snippet) (string, error) {
	where := fmt.Sprintf("//line %s:%d\n", s.File, s.Line)
	if packageLine.MatchString(s.Code) {
		return where + s.Code, nil
	}
	first, body, _ := strings.Cut(s.Code, "\n")
	m := fragmentMark.FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		return "", fmt.Errorf("%s:%d: a ```go block that is neither a program (no package clause) nor a fragment "+
			"(first line // fragment(params...)): see internal/docsnippets", s.File, s.Line)
	}
	params := m[1]
	names := map[string]bool{}
	for _, q := range qualified.FindAllStringSubmatch(params+"\n"+body, -1) {
		if _, ok := Imports[q[1]]; ok {
			names[q[1]] = true
		}
	}
	paths := make([]string, 0, len(names))
	for n := range names {
		paths = append(paths, Imports[n])
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("package main\n\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "import %q\n", p)
	}
	fmt.Fprintf(&b, "\nfunc main() {}\n\nvar _ = fragment\n\nfunc fragment(%s) error {\n", params)
	fmt.Fprintf(&b, "//line %s:%d\n", s.File, s.Line+1)
	b.WriteString(body)
	b.WriteString("\treturn nil\n}\n")
	return b.String(), nil
}
