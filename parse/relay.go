package parse

// This file decodes the Agent Relay protocol frames (REFERENCE §6b).

// relayFrameType reports whether an envelope type is one of the Agent Relay
// protocol's failure frames (REFERENCE §6b): ERROR, NACK or BUSY.
func relayFrameType(t []byte) bool {
	switch string(t) {
	case "ERROR", "NACK", "BUSY":
		return true
	}
	return false
}

// relayFrame decodes an Agent Relay envelope {v, type, id, ts, payload}
// whose type is ERROR ({code, message, fatal}), NACK ({ack_id, code,
// reason, message}) or BUSY ({retry_after_ms, queue_depth}).
func (d *Decoder) relayFrame(typ, p jval, f *facts, rec *Record) *DecodeError {
	a := &d.sc.ar
	rec.Envelope = EnvRelayFrame
	switch string(typ.rawStr()) {
	case "BUSY":
		f.relayCode = "BUSY"
		if ms, ok := p.get("retry_after_ms").int(); ok {
			f.relayRetryMS = ms
		}
	default:
		f.relayCode = a.str(p.get("code"))
		if f.relayCode == "" {
			f.relayCode = string(typ.rawStr())
		}
		msg := p.get("message")
		if !msg.ok() {
			msg = p.get("reason")
		}
		rec.Message = d.redactStr(a.str(msg))
	}
	return nil
}
