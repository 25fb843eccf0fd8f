package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/errtrail/errtrail/internal/testenv"
)

// TestConfigErrorExit: on the real server, a database that does not exist
// and a wrong password are configuration errors, exit 6 with what to check,
// for lookup and report alike; not "the error store is unavailable" (exit
// 4, which tells a person to retry).
func TestConfigErrorExit(t *testing.T) {
	addr := testenv.ClickHouse(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lookup", "err_01HZ9CONFIG", "--clickhouse.database", "errtrail_cmd_no_such_db"}, "--clickhouse.database"},
		{[]string{"report", "research-agent", "--clickhouse.database", "errtrail_cmd_no_such_db"}, "--clickhouse.database"},
		{[]string{"lookup", "err_01HZ9CONFIG", "--clickhouse.password", "not-the-password"}, "password"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append(tc.args, "--clickhouse.addr", addr), &out, &errb)
		msg := errb.String()
		if code != exitConfig || !strings.Contains(msg, "refused the configuration") || !strings.Contains(msg, tc.want) {
			t.Errorf("%q: exit %d (want %d), stderr %q (want it to name %q)", tc.args, code, exitConfig, msg, tc.want)
		}
		if strings.Contains(msg, "unavailable") || strings.Contains(msg, "err_01HZ9CONFIG") || out.Len() != 0 {
			t.Errorf("%q: says unavailable, quotes the id or prints an answer: %q / %q", tc.args, msg, out.String())
		}
	}
}
