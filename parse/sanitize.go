package parse

import "github.com/errtrail/errtrail/redact"

// sanitize checks every string of a finished record by what it is, so that
// no value reaches a row as it arrived unless its kind allows it:
// identifiers (ids, caller, agent, method, codes, limit and scope names)
// keep values that fit their grammar and that no detector flags, and get a
// keyed hash otherwise; the endpoint keeps scheme, host and route; field
// paths keep their structure. Message texts and violation descriptions were
// redacted as they were decoded. It runs on decoded and on dead-lettered
// records alike: a dead-letter row keeps the context that could be read.
func (d *Decoder) sanitize(r *Record) {
	// Values that repeat from reply to reply go through the redactor's
	// memo; ids that are new with every reply are checked directly.
	d.ident(&r.SourceKind, redact.ID)
	d.ident(&r.SourceID, redact.ID)
	d.ident(&r.Agent, redact.ID)
	d.ident(&r.Caller, redact.ID)
	d.ident(&r.Method, redact.ID)
	d.ident(&r.Code, redact.ID)
	d.ident(&r.Reason, redact.ID)
	d.ident(&r.Domain, redact.ID)
	d.ident(&r.Limit, redact.Name)
	d.ident(&r.Scope, redact.Name)
	d.identOnce(&r.EventID)
	d.identOnce(&r.HTTPRequestID)
	d.identOnce(&r.JSONRPCID)
	d.identOnce(&r.MessageID)
	d.identOnce(&r.TaskID)
	d.identOnce(&r.ErrorID)
	if r.RequestID == r.HTTPRequestID { // the same id, from the header and the body
		r.RequestID = r.HTTPRequestID
	} else {
		d.identOnce(&r.RequestID)
	}
	if r.IdempotencyKey != "" {
		// Only ever compared for equality (attempts of one request): always
		// the keyed hash, never the key a client chose.
		r.IdempotencyKey = d.sc.ar.save(stringBytes(d.rd.Hash(r.IdempotencyKey)))
	}
	if r.Endpoint != "" {
		r.Endpoint = d.saveIfChanged(r.Endpoint, d.rd.EndpointView(r.Endpoint))
	}
	for i := range r.FieldViolations {
		v := &r.FieldViolations[i]
		v.Field = d.saveIfChanged(v.Field, d.rd.PathView(v.Field))
	}
}

// identOnce is ident for ids that do not repeat.
func (d *Decoder) identOnce(p *string) {
	if out, keep := d.rd.IdentOnce(*p, redact.ID); !keep {
		*p = d.sc.ar.save(stringBytes(out))
	}
}

// ident replaces *p with its keyed hash unless it may be kept.
func (d *Decoder) ident(p *string, g redact.Grammar) {
	if out, keep := d.rd.Ident(*p, g); !keep {
		*p = d.sc.ar.save(stringBytes(out))
	}
}

// saveIfChanged keeps s when out is s itself, else copies out (a view of
// the redactor's memory) into the arena.
func (d *Decoder) saveIfChanged(s, out string) string {
	if out == s {
		return s
	}
	return d.sc.ar.save(stringBytes(out))
}
