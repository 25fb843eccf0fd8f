package parse

import "strings"

// Detail type names (the part of an Any type URL after the last '/').
const (
	tErrorInfo    = "google.rpc.ErrorInfo"
	tRetryInfo    = "google.rpc.RetryInfo"
	tQuotaFailure = "google.rpc.QuotaFailure"
	tBadRequest   = "google.rpc.BadRequest"
	tDebugInfo    = "google.rpc.DebugInfo"
	tRequestInfo  = "google.rpc.RequestInfo"
	tStruct       = "google.protobuf.Struct"
	tAAPError     = "aap.error" // AAP v1.0 HTTP+JSON used type.googleapis.com/aap.error
)

// typeName returns the message name of an Any type URL.
func typeName(url string) string {
	// Compared as two constant halves, which compile to word compares.
	if len(url) > 20 && url[:10] == "type.googl" && url[10:20] == "eapis.com/" {
		return url[20:]
	}
	if i := strings.LastIndexByte(url, '/'); i >= 0 {
		return url[i+1:]
	}
	return url
}

// detailKind is a detail type the decoder reads (dOther: any other).
type detailKind uint8

const (
	dOther detailKind = iota
	dErrorInfo
	dRetryInfo
	dQuotaFailure
	dBadRequest
	dDebugInfo
	dRequestInfo
	dStruct
	dAAPError
)

// detailOf returns the kind of a detail type name. The google.rpc. prefix
// is compared once and the rest, like the other names, is short enough to
// be compared in a word or two without a call.
func detailOf(name string) detailKind {
	if len(name) > 11 && name[:11] == "google.rpc." {
		switch n := name[11:]; {
		case n == "ErrorInfo":
			return dErrorInfo
		case n == "RetryInfo":
			return dRetryInfo
		case n == "QuotaFailure":
			return dQuotaFailure
		case n == "BadRequest":
			return dBadRequest
		case n == "DebugInfo":
			return dDebugInfo
		case n == "RequestInfo":
			return dRequestInfo
		}
		return dOther
	}
	switch {
	case name == tStruct:
		return dStruct
	case name == tAAPError:
		return dAAPError
	}
	return dOther
}

// facts collects what typed details said, from JSON or protobuf, before the
// classifier turns them into a Record.
type facts struct {
	nDetails int
	nTyped   int // details that carry an @type (JSON) or are an Any (protobuf)

	errInfo      bool
	errInfoIndex int // position of the first ErrorInfo in the details array
	reason       string
	domain       string
	metaCode     string
	metaErrorID  string
	metaRetry    Tri
	metaPolicy   string
	metaScope    string
	metaTaskID   string
	metaMethod   string
	metaExtURI   string
	metaReqHdr   string
	// metaKeys: which of error_id, retryable, created_at the metadata has
	// (seed 000's required AAP metadata besides code); metaNonString: a
	// metadata value that is not a JSON string.
	metaKeys      uint8
	metaNonString bool

	retryInfo   bool
	retryInfoMS int64

	quota        bool
	quotaSubject string
	quotaLimit   string

	badRequest bool
	debugInfo  bool
	requestID  string

	aap aapInfo
	mcp mcpInfo

	// AgentRelay data object.
	relayCode      string
	relayRequestID string
	relayRetryMS   int64

	// form: what the reply's error object looks like, for the seed 003 and
	// seed 004 rules (formrules.go).
	form formFacts
}

func (f *facts) reset() {
	*f = facts{} // cleared in place (a literal with values is built and copied)
	f.errInfoIndex, f.relayRetryMS, f.aap.retryAfterMS = -1, -1, -1
}

// Bits of facts.metaKeys.
const (
	metaHasErrorID uint8 = 1 << iota
	metaHasRetryable
	metaHasCreatedAt
)

// aapVia is where an aap.error payload was found.
type aapVia uint8

const (
	viaOther    aapVia = iota // a body, a tool result, a detail of another type
	viaStruct                 // a google.protobuf.Struct detail (seed 000's A2A encoding)
	viaMetadata               // spread into ErrorInfo metadata (a2a-python's wrapping)
	viaData                   // a JSON-RPC error's data object
	viaWrapped                // a PAP body's "error" member instead of the body itself
)

// Bits of aapInfo.members: seed 000's required members.
const (
	aapHasErrorID uint8 = 1 << iota
	aapHasCode
	aapHasMessage
	aapHasRetryable
	aapHasCreatedAt
	aapHasType
	aapRequired = aapHasErrorID | aapHasCode | aapHasMessage | aapHasRetryable | aapHasCreatedAt | aapHasType
)

// isAAPObject reports whether v is an aap.error: its type says so, or it
// left out its type (seed 000 requires it) but its code is one of seed
// 000's and it has a member only an aap.error has (error_id, retryable or
// created_at; an AgentRelay error has code, message, request_id, details).
func isAAPObject(v jval) bool {
	if v.kind != jObject {
		return false
	}
	if typ := v.get("type"); typ.ok() {
		return typ.kind == jString && string(typ.rawStr()) == tAAPError
	}
	c := v.get("code")
	if c.kind != jString {
		return false
	}
	if spec, ok := aapCodes[string(c.rawStr())]; !ok || spec.jsonrpc == 0 {
		return false
	}
	return v.get("error_id").ok() || v.get("retryable").ok() || v.get("created_at").ok()
}

// aapInfo is an aap.error payload (seed 000; REFERENCE §6a).
type aapInfo struct {
	via          aapVia
	members      uint8 // aapHas* bits of the required members present with their type
	itemBad      bool  // a details.errors[] item without a JSON Pointer instanceLocation, a keyword or an error
	found        bool
	code         string
	errorID      string
	message      string
	retryable    Tri
	retryAfterMS int64
	hasErrors    bool
	// leadAccepted: an APPOINTMENT_TIME_UNAVAILABLE whose details show a
	// lead that was accepted (leadEvidence).
	leadAccepted bool
	// errorID2 is the error_id of a second copy (an MCP tool result's JSON
	// text), checked like the first.
	errorID2 string
}

// mcpInfo is what an MCP tool result says about its form (seed 000's MCP
// binding: a completed tool result, isError true, the typed error in
// structuredContent and the same error as JSON text in content).
type mcpInfo struct {
	notIsError  bool // an aap.error in a result without isError: true
	notComplete bool // resultType other than "complete"
	mismatch    bool // structuredContent and the content text are not the same aap.error
}

// --- JSON details ---

// jsonDetails reads an A2A/google.rpc details array (JSON form). It scans the
// whole array and matches on @type, never on position.
func (d *Decoder) jsonDetails(arr jval, f *facts, rec *Record) {
	it := arr.array()
	idx := 0
	for {
		v, ok := it.next()
		if !ok {
			return
		}
		f.nDetails++
		if v.kind == jObject {
			d.jsonDetail(v, idx, f, rec)
		}
		idx++
	}
}

func (d *Decoder) jsonDetail(v jval, idx int, f *facts, rec *Record) {
	a := &d.sc.ar
	at := v.getAtType()
	if at.kind == jString {
		f.nTyped++
	}
	switch detailOf(typeName(a.str(at))) {
	case dErrorInfo:
		if f.errInfo {
			return // the first ErrorInfo decides; AIP-193 allows exactly one
		}
		f.errInfo, f.errInfoIndex = true, idx
		it := v.object()
		for {
			k, mv, ok := it.next()
			if !ok {
				break
			}
			switch string(k) {
			case "reason":
				f.reason = a.str(mv)
			case "domain":
				f.domain = a.str(mv)
			case "metadata":
				// a2a-python passes an error's data through as metadata, so an
				// aap.error payload can arrive there whole.
				if typ := mv.get("type"); typ.kind == jString && string(typ.rawStr()) == tAAPError {
					d.jsonAAP(mv, viaMetadata, f, rec)
				}
				mi := mv.object()
				for {
					mk, x, ok := mi.next()
					if !ok {
						break
					}
					d.metaEntry(bytesToString(mk), x, f)
				}
			}
		}
	case dRetryInfo:
		dv := v.get("retryDelay")
		if !dv.ok() {
			dv = v.get("retry_delay")
		}
		if ms, ok := durationMS(dv.rawStr()); ok {
			f.retryInfo, f.retryInfoMS = true, ms
		} else if dv.kind == jObject { // {"seconds":..,"nanos":..} from hand-rolled encoders
			s, _ := dv.get("seconds").int()
			n, _ := dv.get("nanos").int()
			f.retryInfo, f.retryInfoMS = true, s*1000+n/1e6
		}
	case dQuotaFailure:
		f.quota = true
		vs := v.get("violations").array()
		if q, ok := vs.next(); ok {
			f.quotaSubject = a.str(q.get("subject"))
			f.quotaLimit = a.str(q.get("quotaId"))
			if f.quotaLimit == "" {
				f.quotaLimit = a.str(q.get("quotaMetric"))
			}
			if f.quotaLimit == "" {
				f.quotaLimit = a.str(q.get("description"))
			}
		}
	case dBadRequest:
		f.badRequest = true
		fv := v.get("fieldViolations")
		if !fv.ok() {
			fv = v.get("field_violations")
		}
		it := fv.array()
		for {
			x, ok := it.next()
			if !ok {
				break
			}
			field := a.str(x.get("field"))
			f.form.badRequestField(field)
			d.addViolation(rec, field, a.str(x.get("description")))
		}
	case dDebugInfo:
		f.debugInfo = true
	case dRequestInfo:
		f.requestID = a.str(v.get("requestId"))
	case dStruct:
		// Canonical ProtoJSON wraps Struct fields in "value"; a2a-go flattens
		// them beside @type (REFERENCE §7.9). Accept both.
		body := v.get("value")
		if body.kind != jObject {
			body = v
		}
		if isAAPObject(body) {
			d.jsonAAP(body, viaStruct, f, rec)
		}
	case dAAPError:
		d.jsonAAP(v, viaOther, f, rec)
	default:
		// An entry without @type (a2a-rs) or of another type: an aap.error may
		// still be recognised by its own "type" member.
		if typ := v.get("type"); typ.kind == jString && string(typ.rawStr()) == tAAPError {
			d.jsonAAP(v, viaOther, f, rec)
		}
	}
}

// metaEntry reads one ErrorInfo metadata entry. Values are strings in proto
// but arrive as other JSON types from some SDKs (REFERENCE §7.10): booleans
// are read as "true"/"false", objects and numbers are ignored.
func (d *Decoder) metaEntry(k string, mv jval, f *facts) {
	if mv.kind != jString {
		f.metaNonString = true // seed 000: "Its string-valued metadata"
	}
	switch mv.kind {
	case jTrue:
		d.metaString(k, "true", f)
	case jFalse:
		d.metaString(k, "false", f)
	case jString:
		d.metaString(k, d.sc.ar.str(mv), f)
	}
}

func triOf(b bool) Tri {
	if b {
		return TriTrue
	}
	return TriFalse
}

// jsonAAP reads an aap.error object.
func (d *Decoder) jsonAAP(v jval, via aapVia, f *facts, rec *Record) {
	if f.aap.found {
		return
	}
	a := &d.sc.ar
	f.aap.found, f.aap.via = true, via
	var members uint8
	if typ := v.get("type"); typ.kind == jString && string(typ.rawStr()) == tAAPError {
		members |= aapHasType
	}
	if c := v.get("code"); c.kind == jString {
		f.aap.code = a.str(c)
		members |= aapHasCode
	}
	if c := v.get("error_id"); c.kind == jString {
		f.aap.errorID = a.str(c)
		members |= aapHasErrorID
	}
	if c := v.get("message"); c.kind == jString {
		f.aap.message = a.str(c)
		members |= aapHasMessage
	}
	if c := v.get("created_at"); c.kind == jString && len(c.rawStr()) > 0 {
		members |= aapHasCreatedAt
	}
	if rv := v.get("retryable"); rv.kind == jTrue || rv.kind == jFalse {
		f.aap.retryable = triOf(rv.kind == jTrue)
		members |= aapHasRetryable
	} else if b, ok := rv.boolean(); ok { // "true" as a string: read, but not the boolean seed 000 requires
		f.aap.retryable = triOf(b)
	}
	f.aap.members = members
	det := v.get("details")
	if det.kind == jObject {
		if ms, ok := det.get("retry_after_ms").int(); ok {
			f.aap.retryAfterMS = ms
		} else if s, ok := det.get("retry_after_seconds").int(); ok {
			f.aap.retryAfterMS = s * 1000
		}
		errs := det.get("errors")
		it := errs.array()
		for {
			x, ok := it.next()
			if !ok {
				break
			}
			f.aap.hasErrors = true
			// Keep the location and the constraint, never the value.
			lv, kv, ev := x.get("instanceLocation"), x.get("keyword"), x.get("error")
			loc := a.str(lv)
			kw := a.str(kv)
			if lv.kind != jString || (loc != "" && loc[0] != '/') || kv.kind != jString || kw == "" ||
				ev.kind != jString || len(ev.rawStr()) == 0 {
				f.aap.itemBad = true
			}
			d.addViolation(rec, loc, kw)
		}
		// Every text of the details (the errors' explanations, the hint,
		// anything else) is read by the caller, though not stored.
		d.scanTexts(det, 0)
		if f.aap.code == "APPOINTMENT_TIME_UNAVAILABLE" {
			f.aap.leadAccepted = leadEvidence(det, 0)
		}
	}
}

// scanAAPTexts checks the texts of a second copy of an aap.error (an MCP
// tool result's JSON text that differs from its structuredContent): the
// record keeps one copy, the caller reads both.
func (d *Decoder) scanAAPTexts(v jval, f *facts) {
	a := &d.sc.ar
	d.scanText(a.str(v.get("message")))
	d.scanTexts(v.get("details"), 0)
	if id := v.get("error_id"); id.kind == jString && f.aap.errorID2 == "" {
		f.aap.errorID2 = a.str(id)
	}
}

func (d *Decoder) addViolation(rec *Record, field, desc string) {
	if len(rec.FieldViolations) >= 64 {
		return
	}
	rec.FieldViolations = append(rec.FieldViolations, FieldViolation{Field: field, Description: d.redactStr(desc)})
}

// --- protobuf details (grpc-status-details-bin) ---

// pbStatus decodes a serialized google.rpc.Status. It returns the code and
// message; details go into f.
func (d *Decoder) pbStatus(b []byte, f *facts, rec *Record) (code int, msg string, err *DecodeError) {
	c := pbuf{b: b}
	code = -1
	idx := 0
	for c.more() {
		field, wt := c.tag()
		switch {
		case field == 1 && wt == 0:
			code = int(c.varint())
		case field == 2 && wt == 2:
			msg = bytesToString(c.bytes())
		case field == 3 && wt == 2:
			d.pbAny(c.bytes(), idx, f, rec)
			f.nDetails++
			f.nTyped++
			idx++
		default:
			c.skip(wt)
		}
	}
	if c.bad {
		return -1, "", errAt(ErrBadGRPC, "grpc-status-details-bin", c.p, "malformed google.rpc.Status")
	}
	return code, msg, nil
}

func (d *Decoder) pbAny(b []byte, idx int, f *facts, rec *Record) {
	urlb, val, bad := pbPair(b) // google.protobuf.Any: type_url, value
	if bad {
		return
	}
	url := bytesToString(urlb)
	m := pbuf{b: val}
	switch detailOf(typeName(url)) {
	case dErrorInfo:
		if f.errInfo {
			return
		}
		f.errInfo, f.errInfoIndex = true, idx
		for m.more() {
			field, wt := m.tag()
			switch {
			case field == 1 && wt == 2:
				f.reason = bytesToString(m.bytes())
			case field == 2 && wt == 2:
				f.domain = bytesToString(m.bytes())
			case field == 3 && wt == 2:
				k, v := pbMapEntry(m.bytes())
				d.metaString(k, v, f)
			default:
				m.skip(wt)
			}
		}
	case dRetryInfo:
		for m.more() {
			field, wt := m.tag()
			if field == 1 && wt == 2 {
				dur := pbuf{b: m.bytes()}
				var s, n int64
				for dur.more() {
					ff, w := dur.tag()
					switch {
					case ff == 1 && w == 0:
						s = int64(dur.varint())
					case ff == 2 && w == 0:
						n = int64(int32(dur.varint()))
					default:
						dur.skip(w)
					}
				}
				f.retryInfo, f.retryInfoMS = true, s*1000+n/1e6
			} else {
				m.skip(wt)
			}
		}
	case dQuotaFailure:
		f.quota = true
		for m.more() {
			field, wt := m.tag()
			if field == 1 && wt == 2 && f.quotaSubject == "" && f.quotaLimit == "" {
				q := pbuf{b: m.bytes()}
				var desc, metric, id string
				for q.more() {
					ff, w := q.tag()
					switch {
					case ff == 1 && w == 2:
						f.quotaSubject = bytesToString(q.bytes())
					case ff == 2 && w == 2:
						desc = bytesToString(q.bytes())
					case ff == 4 && w == 2:
						metric = bytesToString(q.bytes())
					case ff == 5 && w == 2:
						id = bytesToString(q.bytes())
					default:
						q.skip(w)
					}
				}
				f.quotaLimit = firstNonEmpty(id, metric, desc)
			} else {
				m.skip(wt)
			}
		}
	case dBadRequest:
		f.badRequest = true
		for m.more() {
			field, wt := m.tag()
			if field == 1 && wt == 2 {
				q := pbuf{b: m.bytes()}
				var fld, desc string
				for q.more() {
					ff, w := q.tag()
					switch {
					case ff == 1 && w == 2:
						fld = bytesToString(q.bytes())
					case ff == 2 && w == 2:
						desc = bytesToString(q.bytes())
					default:
						q.skip(w)
					}
				}
				f.form.badRequestField(fld)
				d.addViolation(rec, fld, desc)
			} else {
				m.skip(wt)
			}
		}
	case dDebugInfo:
		f.debugInfo = true
	case dRequestInfo:
		for m.more() {
			field, wt := m.tag()
			if field == 1 && wt == 2 {
				f.requestID = bytesToString(m.bytes())
			} else {
				m.skip(wt)
			}
		}
	case dStruct:
		d.pbStructAAP(val, f)
	}
}

// metaString stores a string-valued metadata entry (JSON or protobuf).
// Every value but the code and the error id (checked by their own rules)
// is a text the caller reads: echoes_secret, echoes_stack_trace.
func (d *Decoder) metaString(k, v string, f *facts) {
	switch k {
	case "code":
		f.metaCode = v
		return
	case "error_id", "errorId":
		f.metaErrorID = v
		f.metaKeys |= metaHasErrorID
		return
	case "created_at":
		f.metaKeys |= metaHasCreatedAt
	case "retryable":
		f.metaKeys |= metaHasRetryable
		switch v {
		case "true":
			f.metaRetry = TriTrue
		case "false":
			f.metaRetry = TriFalse
		}
	case "policy", "quotaId", "limit":
		f.metaPolicy = v
	case "scope":
		f.metaScope = v
	case "taskId", "task_id":
		f.metaTaskID = v
	case "method":
		f.metaMethod = v
	case "extensionUri":
		f.metaExtURI = v
	case "requiredHeader":
		f.metaReqHdr = v
	}
	d.scanText(v) // every value but the code and the error id
}

// pbStructAAP looks for an aap.error inside a google.protobuf.Struct.
func (d *Decoder) pbStructAAP(b []byte, f *facts) {
	if f.aap.found {
		return
	}
	var code, errID, msg, typ string
	var hasType bool
	var members uint8
	retry := TriUnknown
	var retryMS int64 = -1
	c := pbuf{b: b}
	for c.more() {
		field, wt := c.tag()
		if field != 1 || wt != 2 {
			c.skip(wt)
			continue
		}
		key, val := pbMapEntryRaw(c.bytes()) // Struct.fields: string → Value
		s, bv, _, kind, sub := pbValue(val)
		switch key {
		case "type":
			typ, hasType = s, true
		case "code":
			code = s
			if kind == 3 {
				members |= aapHasCode
			}
		case "error_id":
			errID = s
			if kind == 3 {
				members |= aapHasErrorID
			}
		case "message":
			msg = s
			if kind == 3 {
				members |= aapHasMessage
			}
		case "created_at":
			if kind == 3 && s != "" {
				members |= aapHasCreatedAt
			}
		case "retryable":
			if kind == 4 {
				retry = triOf(bv)
				members |= aapHasRetryable
			}
		case "details":
			if kind == 5 {
				retryMS = pbStructNumber(sub, "retry_after_ms", "retry_after_seconds")
			}
		}
	}
	switch {
	case typ == tAAPError:
		members |= aapHasType
	case hasType:
		return
	default: // no type: an aap.error only by its code and its own members (isAAPObject)
		if spec, ok := aapCodes[code]; !ok || spec.jsonrpc == 0 ||
			members&(aapHasErrorID|aapHasRetryable|aapHasCreatedAt) == 0 {
			return
		}
	}
	f.aap = aapInfo{found: true, via: viaStruct, members: members, code: code, errorID: errID, message: msg, retryable: retry, retryAfterMS: retryMS}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
