package parse

// Seed 000's rules on the texts and ids a reply carries and on AAP's MCP
// and PAP bindings (the A2A binding's are aapFindings in classify.go).

// seed000Findings raises echoes_stack_trace, aap_error_id_exposes_identity,
// the MCP binding's aap_mcp_* and the PAP binding's pap_* findings, and
// aap_appointment_conceals_lead.
func (d *Decoder) seed000Findings(h *hdrInfo, f *facts, rec *Record) {
	if d.sc.stack {
		rec.addFinding(FindEchoesStackTrace)
	}
	if rec.Protocol != ProtocolAAP {
		return
	}
	// "Correlation IDs must be suitable for support without exposing
	// shopper identity": an id that redaction would alter (an e-mail
	// address, a phone number, a national id) exposes it.
	for _, id := range [...]string{f.aap.errorID, f.metaErrorID, f.aap.errorID2} {
		if id != "" && d.textAltered(id) {
			rec.addFinding(FindAAPErrorIDIdentity)
			break
		}
	}
	switch rec.Envelope {
	case EnvMCPToolResult:
		if f.aap.found && (f.mcp.notIsError || f.mcp.notComplete) {
			rec.addFinding(FindAAPMCPNotIsError)
		}
		if f.aap.found && f.mcp.mismatch {
			rec.addFinding(FindAAPMCPContentMismatch)
		}
	case EnvJSONRPCError:
		// A skill failure answered by an MCP server as a JSON-RPC error
		// instead of a tool result.
		if isMCPReply(h, rec) {
			rec.addFinding(FindAAPMCPProtocolError)
		}
	case EnvAAPError:
		if rec.HTTPStatus != 0 {
			if want := aapCodes[rec.Code].http; want != 0 && want != rec.HTTPStatus {
				rec.addFinding(FindPAPStatusNotMapped)
			}
		}
		if f.aap.via == viaWrapped {
			rec.addFinding(FindPAPBodyNotDirect)
		}
	}
	if rec.Code == "APPOINTMENT_TIME_UNAVAILABLE" &&
		(f.aap.leadAccepted || messageAcceptsLead(f.aap.message) || messageAcceptsLead(rec.Message)) {
		rec.addFinding(FindAAPAppointmentConceals)
	}
}

// isMCPReply: the reply answers an MCP request, by the method the event
// names or by an MCP transport header.
func isMCPReply(h *hdrInfo, rec *Record) bool {
	return isMCPMethod(rec.Method) || h.transportProtocol() == ProtocolMCP
}

// textAltered reports whether redaction would replace anything in s.
func (d *Decoder) textAltered(s string) bool {
	out, changed := d.rd.AppendText(d.sc.tmp[:0], s)
	d.sc.tmp = out[:0]
	return changed
}

// leadEvidence reports whether the details of an APPOINTMENT_TIME_UNAVAILABLE
// show a lead that was accepted, which seed 000 says must be answered with
// lead.submit.response ("An accepted lead with a declined appointment
// returns `lead.submit.response` with both outcomes."): a lead member
// (lead, lead_id, leadId, lead_status, …) whose value is not empty, false
// or a refusal; a status or outcome member saying accepted; or a
// lead.submit.response inside. Depth is bounded.
func leadEvidence(v jval, depth int) bool {
	if depth > 4 {
		return false
	}
	it := v.object()
	for {
		k, x, ok := it.next()
		if !ok {
			return false
		}
		lead := leadKey(k)
		switch x.kind {
		case jString:
			val := x.rawStr()
			switch {
			case string(val) == "lead.submit.response":
				return true
			case lead && len(val) > 0 && !refusal(val):
				return true
			case outcomeKey(k) && acceptance(val):
				return true
			}
		case jNumber, jTrue:
			if lead {
				return true
			}
		case jObject:
			if leadEvidence(x, depth+1) || (lead && x.get("id").ok() && !refusal(x.get("status").rawStr())) {
				return true
			}
		case jArray:
			ai := x.array()
			for {
				e, ok := ai.next()
				if !ok {
					break
				}
				if e.kind == jObject && leadEvidence(e, depth+1) {
					return true
				}
			}
		}
	}
}

// leadKey: lead, lead_<x>, lead-<x> or lead<X> (leadId), in any case of
// its first letter.
func leadKey(k []byte) bool {
	if len(k) < 4 || k[0]|0x20 != 'l' || string(k[1:4]) != "ead" {
		return false
	}
	return len(k) == 4 || k[4] == '_' || k[4] == '-' || (k[4] >= 'A' && k[4] <= 'Z')
}

func outcomeKey(k []byte) bool {
	switch string(k) {
	case "status", "state", "outcome", "result", "submission", "submission_status":
		return true
	}
	return false
}

// acceptance: a value that says the lead went through.
func acceptance(v []byte) bool {
	var buf [16]byte
	switch string(lowerWord(&buf, v)) {
	case "accepted", "created", "received", "recorded", "submitted", "queued", "delivered":
		return true
	}
	return false
}

// refusal: a value that says it did not.
func refusal(v []byte) bool {
	var buf [16]byte
	switch string(lowerWord(&buf, v)) {
	case "rejected", "declined", "refused", "failed", "none", "not_created", "not_accepted", "not_submitted", "cancelled", "canceled":
		return true
	}
	return false
}

// lowerWord returns a short ASCII word in lower case in buf (nil when it
// is longer than buf); compared with switch string(…), no allocation.
func lowerWord[T ~string | ~[]byte](buf *[16]byte, v T) []byte {
	if len(v) > len(buf) {
		return nil
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(v)]
}

// messageAcceptsLead reports whether a message says the lead was accepted:
// a clause (up to . ; , ! ? or "but") that names a lead and a word of
// acceptance and holds no negation. "The lead was accepted but no time
// was free" does; "No appointment time could be accepted, so the lead was
// not submitted" does not.
func messageAcceptsLead(msg string) bool {
	var lead, accepted, negated bool
	flush := func() bool { return lead && accepted && !negated }
	for i := 0; i < len(msg); {
		c := msg[i]
		if c == '.' || c == ';' || c == ',' || c == '!' || c == '?' || c == '\n' {
			if flush() {
				return true
			}
			lead, accepted, negated = false, false, false
			i++
			continue
		}
		if !isLetter(c) {
			i++
			continue
		}
		j := i
		for j < len(msg) && (isLetter(msg[j]) || msg[j] == '\'') {
			j++
		}
		var buf [16]byte
		w := lowerWord(&buf, msg[i:j])
		switch string(w) {
		case "lead", "leads":
			lead = true
		case "accepted", "created", "received", "recorded", "saved", "stored", "registered", "submitted", "forwarded", "delivered":
			accepted = true
		case "not", "no", "never", "cannot", "without", "neither", "nor":
			negated = true
		case "but":
			if flush() {
				return true
			}
			lead, accepted, negated = false, false, false
		default:
			if len(w) > 3 && string(w[len(w)-3:]) == "n't" {
				negated = true
			}
		}
		i = j
	}
	return flush()
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
