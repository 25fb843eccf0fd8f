package emit

import "strings"

// The gRPC wire forms the interceptors (package emit/emitgrpc) and a proxy
// that sees gRPC as HTTP/2 (cmd/tap) share: neither needs grpc-go.

// GRPCMethod maps a gRPC full method to the event's method: a method of an
// A2A service (a service named A2AService in any package, such as
// /lf.a2a.v1.A2AService/SendMessage or /a2a.v1.A2AService/GetTask) is its
// A2A method name (SendMessage, GetTask): A2A's gRPC methods carry the
// names of its JSON-RPC methods. Any other full method is kept as it is
// (/pkg.Service/Method).
func GRPCMethod(fullMethod string) string {
	i := strings.LastIndexByte(fullMethod, '/')
	if i <= 0 {
		return fullMethod
	}
	svc := fullMethod[:i]
	if svc == "/A2AService" || strings.HasSuffix(svc, ".A2AService") {
		return fullMethod[i+1:]
	}
	return fullMethod
}

// GRPCEncodeMessage percent-encodes a status message as gRPC sends it in
// grpc-message: bytes outside printable ASCII, and '%', as %XX.
func GRPCEncodeMessage(msg string) string {
	n := 0
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; c < 0x20 || c > 0x7e || c == '%' {
			n++
		}
	}
	if n == 0 {
		return msg
	}
	b := make([]byte, 0, len(msg)+2*n)
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c < 0x20 || c > 0x7e || c == '%' {
			b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&0xf])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}
