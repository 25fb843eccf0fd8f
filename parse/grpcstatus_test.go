package parse

import "testing"

// TestGRPCTextStatusIsAnHTTPStatus: the HTTP status of a gRPC reply text
// form (first line, or :status) is kept only when it can be one; a long
// number there (a card number, found by FuzzDecodeMessage) never reaches
// http_status, and the reply still decodes with the default 200.
func TestGRPCTextStatusIsAnHTTPStatus(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"GRPC 503\ngrpc-status: 14\n", 503},
		{"GRPC\n:status: 429\ngrpc-status: 8\n", 429},
		{"GRPC 4539578763621486 \ngrpc-status:3\n", 200},
		{"GRPC\n:status: 4539578763621486\ngrpc-status: 3\n", 200},
		{"GRPC 99\ngrpc-status: 3\n", 200},
	} {
		d := NewDecoder(Options{})
		var rec Record
		if err := d.DecodeMessage([]byte(c.in), nil, 1764489600000, &rec); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if rec.HTTPStatus != c.want {
			t.Errorf("%q: http_status %d, want %d", c.in, rec.HTTPStatus, c.want)
		}
	}
}
