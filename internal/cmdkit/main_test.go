package cmdkit

import (
	"bytes"
	"errors"
	"flag"
	"testing"
)

// TestExitCode: --help exits 0 and says nothing more; an error the flag
// package printed exits 2 without printing it twice; any other error exits
// 2 printed once with the command's name; no error goes on.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		ok   bool
		out  string
	}{
		{nil, 0, true, ""},
		{flag.ErrHelp, 0, false, ""},
		{Shown{Err: errors.New("flag provided but not defined: -x")}, 2, false, ""},
		{errors.New("--kafka.topic is empty"), 2, false, "tap: --kafka.topic is empty\n"},
	} {
		var b bytes.Buffer
		code, ok := ExitCode("tap", tc.err, &b)
		if code != tc.code || ok != tc.ok || b.String() != tc.out {
			t.Errorf("%v: code %d ok %v printed %q; want %d %v %q", tc.err, code, ok, b.String(), tc.code, tc.ok, tc.out)
		}
	}
}
