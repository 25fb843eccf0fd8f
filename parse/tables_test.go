package parse

import (
	"fmt"
	"strings"
	"testing"
)

// The tests below check that every view of a protocol table agrees with the
// table's rows: each code appears once, names and numbers round-trip, and
// the kind and retry default a caller sees (through a lookup or through a
// whole decode) are the row's.

func TestGRPCCodesTable(t *testing.T) {
	if len(grpcCodes) != 17 {
		t.Fatalf("grpcCodes has %d rows, want 17 (google.rpc.Code 0..16)", len(grpcCodes))
	}
	seen := map[string]int{}
	for i, g := range grpcCodes {
		if g.name == "" || g.desc == "" {
			t.Errorf("code %d: row without a name or description (missing from the keyed literal?)", i)
			continue
		}
		if j, dup := seen[g.name]; dup {
			t.Errorf("name %v is the name of codes %d and %d", g.name, j, i)
		}
		seen[g.name] = i
		if got := GRPCCodeName(i); got != g.name {
			t.Errorf("GRPCCodeName(%d) = %q, want the row's %q", i, got, g.name)
		}
		if got := grpcCodeByName([]byte(g.name)); got != i {
			t.Errorf("grpcCodeByName(%q) = %d, want %d", g.name, got, i)
		}
		if row, ok := grpcCodeOf(i); !ok || row != &grpcCodes[i] {
			t.Errorf("grpcCodeOf(%d) is not the row", i)
		}
		if i == grpcOK {
			if g.http != 200 {
				t.Errorf("OK maps to HTTP %d, want 200", g.http)
			}
		} else if g.http < 400 || g.http > 599 {
			t.Errorf("%v maps to HTTP %d, not an error status", g.name, g.http)
		}
	}
	for _, c := range []int{-1, len(grpcCodes), 99} {
		if GRPCCodeName(c) != "" {
			t.Errorf("GRPCCodeName(%d) = %q, want \"\"", c, GRPCCodeName(c))
		}
		if _, ok := grpcCodeOf(c); ok {
			t.Errorf("grpcCodeOf(%d) found a row", c)
		}
	}
	for _, name := range []string{"", "ok", "NOT_A_CODE", "INTERNAL "} {
		if got := grpcCodeByName([]byte(name)); got != -1 {
			t.Errorf("grpcCodeByName(%q) = %d, want -1", name, got)
		}
	}
	// Seed 002: a bare RESOURCE_EXHAUSTED is not a rate limit.
	if k := grpcCodes[grpcResourceExhausted].kind; k != KindUnknown {
		t.Errorf("RESOURCE_EXHAUSTED implies %v, want unknown", k)
	}
}

// TestGRPCCodesDecode decodes a bare status of every code: the record's kind
// and retry default are the row's (the retry following the kind).
func TestGRPCCodesDecode(t *testing.T) {
	for i, g := range grpcCodes {
		if i == grpcOK {
			continue // not an error: refused by the decoder
		}
		rec := decodeBytes(t, []byte(fmt.Sprintf("GRPC 200\ngrpc-status: %d\ngrpc-message: x\n", i)))
		if rec.GRPCCode != i || rec.Kind != g.kind {
			t.Errorf("grpc-status %d (%v): code %d kind %v, want %d %v", i, g.name, rec.GRPCCode, rec.Kind, i, g.kind)
		}
		if want := kindRetry(g.kind); rec.Retryable != want {
			t.Errorf("grpc-status %d (%v): retryable %v, want %v", i, g.name, rec.Retryable, want)
		}
		// The HTTP+JSON Status form names the code; the name maps back to it.
		body := fmt.Sprintf(`{"error":{"code":%d,"status":%q,"message":"x"}}`, g.http, g.name)
		rec = decodeBytes(t, httpResp(g.http, jsonCT, body))
		if rec.GRPCCode != i {
			t.Errorf("status %q in a Status body: code %d, want %d", g.name, rec.GRPCCode, i)
		}
	}
}

func TestA2AErrorsTable(t *testing.T) {
	reasons := map[string]int{} // reason or variant → row
	numbers := map[int]int{}    // JSON-RPC code of a byNumber row → row
	nNumbered := 0
	for i := range a2aErrors {
		e := &a2aErrors[i]
		if e.reason == "" || e.desc == "" || e.jsonrpc == 0 {
			t.Errorf("row %d (%q): reason, description and JSON-RPC code are required", i, e.reason)
		}
		if e.kind == KindUnknown || e.retry == TriUnknown {
			t.Errorf("%v: every A2A error has a kind and a retry default", e.reason)
		}
		for _, r := range append([]string{e.reason}, e.variants...) {
			if j, dup := reasons[r]; dup {
				t.Errorf("reason %v appears in rows %d and %d", r, j, i)
			}
			reasons[r] = i
			if got, ok := a2aByReason[r]; !ok || got != e {
				t.Errorf("a2aByReason[%v] is not row %v", r, e.reason)
			}
		}
		if !e.byNumber {
			if got, ok := a2aByNumber[e.jsonrpc]; ok && got == e {
				t.Errorf("a2aByNumber[%d] names %v, which is named by its reason only", e.jsonrpc, e.reason)
			}
			continue
		}
		nNumbered++
		if j, dup := numbers[e.jsonrpc]; dup {
			t.Errorf("code %d is the code of rows %d and %d", e.jsonrpc, j, i)
		}
		numbers[e.jsonrpc] = i
		if got, ok := a2aByNumber[e.jsonrpc]; !ok || got != e {
			t.Errorf("a2aByNumber[%d] is not row %v", e.jsonrpc, e.reason)
		}
	}
	// The views hold nothing the rows do not.
	if len(a2aByReason) != len(reasons) {
		t.Errorf("a2aByReason has %d entries, the rows %d reasons", len(a2aByReason), len(reasons))
	}
	if len(a2aByNumber) != nNumbered {
		t.Errorf("a2aByNumber has %d entries, the rows %d numbered errors", len(a2aByNumber), nNumbered)
	}
	// REFERENCE §7.3: -32000 is generic and names nothing by itself.
	if _, ok := a2aByNumber[-32000]; ok {
		t.Error("a2aByNumber names -32000")
	}
}

// TestA2AErrorsCallers checks what each caller of the A2A rows sees.
func TestA2AErrorsCallers(t *testing.T) {
	d := NewDecoder(Options{})
	standard := map[int]bool{-32700: true, -32600: true, -32601: true, -32602: true, -32603: true}
	for i := range a2aErrors {
		e := &a2aErrors[i]
		// jsonrpcKind once the protocol is A2A.
		rec := Record{Protocol: ProtocolA2A, JSONRPCCode: e.jsonrpc}
		k, r := d.jsonrpcKind(&rec)
		switch {
		case e.byNumber && (k != e.kind || r != e.retry || rec.Code != e.reason):
			t.Errorf("jsonrpcKind(A2A, %d) = %v %v code %q, want the row's %v %v %q", e.jsonrpc, k, r, rec.Code, e.kind, e.retry, e.reason)
		case !e.byNumber && rec.Code != "":
			t.Errorf("jsonrpcKind(A2A, %d) named %q, want nothing", e.jsonrpc, rec.Code)
		}
		// The five standard codes mean the same whatever the protocol.
		if standard[e.jsonrpc] {
			rec := Record{Protocol: ProtocolUnknown, JSONRPCCode: e.jsonrpc}
			if k, r := d.jsonrpcKind(&rec); k != e.kind || r != e.retry {
				t.Errorf("jsonrpcKind(unknown protocol, %d) = %v %v, want the A2A row's %v %v", e.jsonrpc, k, r, e.kind, e.retry)
			}
		}

		// A whole decode: ErrorInfo with each reason the row accepts.
		for _, reason := range append([]string{e.reason}, e.variants...) {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":%q,"domain":"a2a-protocol.org"}]}}`, e.jsonrpc, reason)
			got := decodeBytes(t, httpResp(200, jsonCT, body))
			if got.Protocol != ProtocolA2A || got.Code != reason || got.Kind != e.kind || got.Retryable != e.retry || got.RetryableSource != SrcDefault {
				t.Errorf("ErrorInfo %v: protocol %v code %q kind %v retryable %v (%v), want A2A %q %v %v (default)",
					reason, got.Protocol, got.Code, got.Kind, got.Retryable, got.RetryableSource, reason, e.kind, e.retry)
			}
			if got.HasFinding(FindReservedDomain) {
				t.Errorf("ErrorInfo %v: reported as not an A2A reason", reason)
			}
		}

		// A whole decode: the number alone, on an A2A method.
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"x"}}`, e.jsonrpc)
		got := decodeBytes(t, httpResp(200, jsonCT, body), MsgHeader{Key: "errtrail-method", Value: []byte("GetTask")})
		if e.byNumber && (got.Code != e.reason || got.Kind != e.kind || got.Retryable != e.retry) {
			t.Errorf("bare %d on GetTask: code %q kind %v retryable %v, want %q %v %v", e.jsonrpc, got.Code, got.Kind, got.Retryable, e.reason, e.kind, e.retry)
		}
		if !e.byNumber && got.Code != "" {
			t.Errorf("bare %d on GetTask: code %q, want none", e.jsonrpc, got.Code)
		}
	}
}

func TestAAPCodesTable(t *testing.T) {
	for code, c := range aapCodes {
		if c.kind == KindUnknown || c.retry == TriUnknown {
			t.Errorf("%v: every AAP code has a kind and a retry default", code)
		}
		if c.validation && c.kind != KindInvalid {
			t.Errorf("%v: a validation code of kind %v", code, c.kind)
		}
		if c.http != 0 && (c.http < 400 || c.http > 599) {
			t.Errorf("%v: HTTP %d is not an error status", code, c.http)
		}

		// A whole decode of a PAP body (a bare aap.error) sent with the row's
		// status, then with another one.
		status := c.http
		if status == 0 {
			status = 400
		}
		body := fmt.Sprintf(`{"type":"aap.error","error_id":"e1","code":%q,"message":"x"}`, code)
		rec := decodeBytes(t, httpResp(status, jsonCT, body))
		if rec.Protocol != ProtocolAAP || rec.Envelope != EnvAAPError || rec.Code != code {
			t.Fatalf("%v: decoded as %v %v %q, want an AAP PAP error", code, rec.Protocol, rec.Envelope, rec.Code)
		}
		if rec.Kind != c.kind || rec.Retryable != c.retry || rec.RetryableSource != SrcDefault {
			t.Errorf("%v: kind %v retryable %v (%v), want the row's %v %v (default)", code, rec.Kind, rec.Retryable, rec.RetryableSource, c.kind, c.retry)
		}
		if rec.HasFinding(FindStatusBodyMismatch) || rec.HasFinding(FindPAPStatusNotMapped) {
			t.Errorf("%v over HTTP %d: %v", code, status, rec.Findings)
		}
		if got := rec.HasFinding(FindValidationWithoutFields); got != c.validation {
			t.Errorf("%v without details.errors: validation_without_fields = %v, want %v", code, got, c.validation)
		}
		if c.http != 0 {
			rec := decodeBytes(t, httpResp(418, jsonCT, body))
			// Seed 000's own rule for PAP's mapping, not seed 002's gateway rule.
			if !rec.HasFinding(FindPAPStatusNotMapped) || rec.HasFinding(FindStatusBodyMismatch) {
				t.Errorf("%v over HTTP 418 (mapped to %d): findings %v; want pap_status_not_mapped alone", code, c.http, rec.Findings)
			}
		}
	}
}

// TestHTTPKindBare500 pins what the comment on httpKind says: a bare 500 is
// internal (and retryable by default), a bare 502 unknown.
func TestHTTPKindBare500(t *testing.T) {
	for _, c := range []struct {
		status int
		kind   Kind
		retry  Tri
	}{{500, KindInternal, TriTrue}, {502, KindUnknown, TriUnknown}, {429, KindQuota, TriTrue}} {
		if k := httpKind(c.status); k != c.kind {
			t.Errorf("httpKind(%d) = %v, want %v", c.status, k, c.kind)
		}
		rec := decodeBytes(t, httpResp(c.status, nil, ``))
		if rec.Kind != c.kind || rec.Retryable != c.retry {
			t.Errorf("bare %d: kind %v retryable %v, want %v %v", c.status, rec.Kind, rec.Retryable, c.kind, c.retry)
		}
	}
}

// TestLimiterReason: the eight limiter and overload reasons of seed 002 and
// the gateways' variants name their kind; a near miss (another case, a
// prefix, a suffix) names nothing.
func TestLimiterReason(t *testing.T) {
	want := map[string]Kind{
		"RATE_LIMIT_EXCEEDED": KindQuota, "RATE_LIMITED": KindQuota, "QUOTA_EXCEEDED": KindQuota,
		"RESOURCE_EXHAUSTED": KindQuota, "TOO_MANY_REQUESTS": KindQuota,
		"AGENT_OVERLOADED": KindOverload, "OVERLOADED": KindOverload, "SERVICE_UNAVAILABLE": KindOverload,
	}
	for r, k := range want {
		if got, ok := limiterReason(r); !ok || got != k {
			t.Errorf("limiterReason(%q) = %v, %v; want %v", r, got, ok, k)
		}
		for _, miss := range []string{strings.ToLower(r), r[1:], r[:len(r)-1], r + "_", " " + r} {
			if got, ok := limiterReason(miss); ok || got != KindUnknown {
				t.Errorf("limiterReason(%q) = %v, %v; want nothing", miss, got, ok)
			}
		}
	}
	if _, ok := limiterReason(""); ok {
		t.Error(`limiterReason("") names a kind`)
	}
}

// TestDetailOf: each detail type the decoder reads is told by its full
// name, and only by it (another case, a prefix, a suffix, another
// package's name are other types).
func TestDetailOf(t *testing.T) {
	want := map[string]detailKind{
		tErrorInfo: dErrorInfo, tRetryInfo: dRetryInfo, tQuotaFailure: dQuotaFailure, tBadRequest: dBadRequest,
		tDebugInfo: dDebugInfo, tRequestInfo: dRequestInfo, tStruct: dStruct, tAAPError: dAAPError,
	}
	for name, k := range want {
		if got := detailOf(name); got != k {
			t.Errorf("detailOf(%q) = %d, want %d", name, got, k)
		}
		for _, miss := range []string{strings.ToLower(name), name[1:], name[:len(name)-1], name + "s",
			strings.Replace(name, ".", "/", 1), "google.rpc.v2." + name[strings.LastIndexByte(name, '.')+1:]} {
			if got := detailOf(miss); got != dOther && miss != name {
				t.Errorf("detailOf(%q) = %d, want another type", miss, got)
			}
		}
	}
	for _, name := range []string{"", "google.rpc.", "google.rpc.Help", "google.rpc.LocalizedMessage", "google.rpc.Status"} {
		if got := detailOf(name); got != dOther {
			t.Errorf("detailOf(%q) = %d, want another type", name, got)
		}
	}
}
