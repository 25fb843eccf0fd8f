package loadgen

import "encoding/base64"

// A hand-written protobuf encoder for the few messages grpc-status-details-bin
// carries: google.rpc.Status{code=1, message=2, details=3 (Any)}, Any{type_url=1,
// value=2}, ErrorInfo{reason=1, domain=2, metadata=3 (map)}, RetryInfo{
// retry_delay=1 (Duration{seconds=1})}, QuotaFailure{violations=1
// (Violation{subject=1, description=2})}. The module does not depend on
// google.golang.org/protobuf, and these five messages do not justify it.

func pbVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func pbTag(b []byte, field, wire int) []byte { return pbVarint(b, uint64(field<<3|wire)) }

func pbBytes(b []byte, field int, v []byte) []byte {
	b = pbTag(b, field, 2)
	b = pbVarint(b, uint64(len(v)))
	return append(b, v...)
}

func pbString(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	return pbBytes(b, field, []byte(v))
}

func pbInt(b []byte, field int, v int64) []byte {
	if v == 0 {
		return b
	}
	return pbVarint(pbTag(b, field, 0), uint64(v))
}

func pbAny(typeName string, value []byte) []byte {
	b := pbString(nil, 1, "type.googleapis.com/"+typeName)
	return pbBytes(b, 2, value)
}

func pbErrorInfo(reason, domain string, metadata [][2]string) []byte {
	b := pbString(nil, 1, reason)
	b = pbString(b, 2, domain)
	for _, kv := range metadata {
		e := pbString(nil, 1, kv[0])
		e = pbString(e, 2, kv[1])
		b = pbBytes(b, 3, e)
	}
	return pbAny("google.rpc.ErrorInfo", b)
}

func pbRetryInfo(seconds int) []byte {
	d := pbInt(nil, 1, int64(seconds))
	return pbAny("google.rpc.RetryInfo", pbBytes(nil, 1, d))
}

func pbQuotaFailure(subject, description string) []byte {
	v := pbString(nil, 1, subject)
	v = pbString(v, 2, description)
	return pbAny("google.rpc.QuotaFailure", pbBytes(nil, 1, v))
}

// grpcStatusBin encodes a google.rpc.Status as grpc-status-details-bin
// (base64, padded, as most gRPC implementations send it).
func grpcStatusBin(code int, message string, details ...[]byte) string {
	b := pbInt(nil, 1, int64(code))
	b = pbString(b, 2, message)
	for _, d := range details {
		b = pbBytes(b, 3, d)
	}
	return base64.StdEncoding.EncodeToString(b)
}
