package testenv

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recordingTB is a stand-in testing.TB that records Fatal and Skip and ends
// its goroutine as the real ones do.
type recordingTB struct {
	testing.TB
	fatal, skip string
}

func (r *recordingTB) Helper()               {}
func (r *recordingTB) Fatal(a ...any)        { r.fatal = fmt.Sprint(a...); runtime.Goexit() }
func (r *recordingTB) Skip(a ...any)         { r.skip = fmt.Sprint(a...); runtime.Goexit() }
func (r *recordingTB) Fatalf(string, ...any) { panic("unexpected Fatalf") }

func binaryWith(name string) (path string, r *recordingTB) {
	r = &recordingTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		path = Binary(r, name)
	}()
	<-done
	return path, r
}

// TestUnitBinaryFailsInCISkipsOutside (a stand-in TB): a program that is
// missing fails the test in CI and skips it elsewhere, naming the install
// command; one that is there is returned with neither.
func TestUnitBinaryFailsInCISkipsOutside(t *testing.T) {
	const missing = "errtrail-no-such-program"
	t.Setenv("CI", "true")
	if p, r := binaryWith(missing); p != "" || r.skip != "" || !strings.Contains(r.fatal, "scripts/stack install") {
		t.Errorf("in CI: path %q, skip %q, fatal %q; want a failure naming scripts/stack install", p, r.skip, r.fatal)
	}
	t.Setenv("CI", "false")
	if p, r := binaryWith(missing); p != "" || r.fatal != "" || !strings.Contains(r.skip, missing) {
		t.Errorf("outside CI: path %q, fatal %q, skip %q; want a skip naming %s", p, r.fatal, r.skip, missing)
	}
	t.Setenv("CI", "true")
	if p, r := binaryWith("go"); p == "" || r.fatal != "" || r.skip != "" {
		t.Errorf("go: path %q, fatal %q, skip %q; want its path and nothing else", p, r.fatal, r.skip)
	}
}
