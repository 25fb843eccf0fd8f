package parse

import (
	"strings"
	"testing"
)

// TestSourceVersion: source.version (event JSON) and the
// errtrail-source-version header (raw forms) reach the record; an event
// without it still decodes (contract v1 unchanged), one whose version is
// not a string decodes without one, and a version that is not an
// identifier (a credential pasted into it) is stored as its keyed hash.
func TestSourceVersion(t *testing.T) {
	d := NewDecoder(Options{})
	ev := func(source string) string {
		return `{"v":1,"observed_at":1764489600123,"agent":"a",` + source + `"reply":{"http_status":500}}`
	}
	for _, c := range []struct {
		name, msg, want string
	}{
		{"with version", ev(`"source":{"kind":"agent","id":"i1","version":"v1.4.2-rc.1"},`), "v1.4.2-rc.1"},
		{"without version", ev(`"source":{"kind":"agent","id":"i1"},`), ""},
		{"without source", ev(``), ""},
		{"version not a string", ev(`"source":{"kind":"agent","version":142},`), ""},
	} {
		var rec Record
		if err := d.DecodeMessage([]byte(c.msg), nil, 0, &rec); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if rec.SourceVersion != c.want {
			t.Errorf("%s: SourceVersion = %q; want %q", c.name, rec.SourceVersion, c.want)
		}
	}
	var rec Record
	if err := d.DecodeMessage([]byte(ev(`"source":{"version":"Bearer abcdefghijklmnopqrstuvwxyz012345"},`)), nil, 0, &rec); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rec.SourceVersion, "abcdefghijklmnop") || !strings.HasPrefix(rec.SourceVersion, "hmac:") {
		t.Errorf("a version holding a credential is stored as %q; want its keyed hash", rec.SourceVersion)
	}
	raw := "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
	if err := d.DecodeMessage([]byte(raw), []MsgHeader{
		{Key: "errtrail-v", Value: []byte("1")}, {Key: "errtrail-agent", Value: []byte("a")},
		{Key: "errtrail-observed-at", Value: []byte("1764489600123")},
		{Key: "errtrail-source-version", Value: []byte("2.0.1")},
	}, 0, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.SourceVersion != "2.0.1" {
		t.Errorf("raw form: SourceVersion = %q; want the header's 2.0.1", rec.SourceVersion)
	}
}
