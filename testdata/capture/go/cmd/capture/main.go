// Command capture starts real SDK servers on 127.0.0.1, provokes their
// errors and writes the raw replies under parse/testdata/corpus/.
//
//	go run ./cmd/capture -out ../../../parse/testdata/corpus [-only a2a-go-v2,...]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"runtime/debug"
	"strings"
)

func modVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "unknown"
}

func main() {
	out := flag.String("out", "../../../parse/testdata/corpus", "corpus root")
	only := flag.String("only", "", "comma-separated subset: a2a-go-v2,a2a-go-v2-compat,a2a-go-v0.3,mcp-go,a2a-js-1,a2a-js-0.3,a2a-python")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	log.SetOutput(io.Discard)

	all := []struct {
		name string
		fn   func(string)
	}{
		{"a2a-go-v2", captureA2AGoV2},
		{"a2a-go-v2-compat", captureA2AGoV2Compat},
		{"a2a-go-v0.3", captureA2AGoV03},
		{"mcp-go", captureMCPGo},
		{"a2a-js-1", captureA2AJS1},
		{"a2a-js-0.3", captureA2AJS03},
		{"a2a-python", captureA2APython},
	}
	for _, s := range all {
		if *only != "" && !strings.Contains(","+*only+",", ","+s.name+",") {
			continue
		}
		fmt.Println(s.name)
		s.fn(*out)
	}
}
