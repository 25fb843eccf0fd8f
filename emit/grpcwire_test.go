package emit

import (
	"testing"

	"github.com/errtrail/errtrail/emit/internal/emittest"
)

func TestGRPCMethod(t *testing.T) {
	for in, want := range map[string]string{
		"/lf.a2a.v1.A2AService/SendMessage": "SendMessage",
		"/a2a.v1.A2AService/GetTask":        "GetTask",
		"/A2AService/CancelTask":            "CancelTask",
		"/grpc.health.v1.Health/Check":      "/grpc.health.v1.Health/Check",
		"/pkg.NotA2AService/X":              "/pkg.NotA2AService/X",
		"":                                  "",
	} {
		if got := GRPCMethod(in); got != want {
			t.Errorf("GRPCMethod(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestGRPCEncodeMessage(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":  "plain text",
		"100% full":   "100%25 full",
		"naïve\nline": "na%C3%AFve%0Aline",
	} {
		if got := GRPCEncodeMessage(in); got != want || got != emittest.PctEncode(in) {
			t.Errorf("GRPCEncodeMessage(%q) = %q; want %q", in, got, want)
		}
	}
}
