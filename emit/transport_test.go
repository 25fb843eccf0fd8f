package emit

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTransportClientSide: a client (source kind gateway) through Transport
// reads every reply exactly as the server sent it; error replies are
// published with the outgoing request's ids, and decode like the wire bytes.
func TestTransportClientSide(t *testing.T) {
	srv := httptest.NewServer(a2aAgent())
	defer srv.Close()
	sink := &capSink{}
	c := newWire()
	gw := &http.Client{Transport: Transport(c.Transport, sink, Config{Source: Source{Kind: KindGateway, ID: "gw-eu-1"}, Agent: "research-agent"})}
	for _, cl := range a2aCalls {
		var body io.Reader
		if cl.body != "" {
			// An io.Reader without GetBody: the transport tees it.
			body = io.MultiReader(strings.NewReader(cl.body))
		}
		req, _ := http.NewRequest(cl.method, srv.URL+cl.path+"?api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-Id", cl.name)
		for k, v := range cl.hdr {
			req.Header.Set(k, v)
		}
		resp, err := gw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_, _, wireBody := readRaw(t, c.Last())
		if !bytes.Equal(got, wireBody) {
			t.Fatalf("%s: the caller read %q; the wire had %q", cl.name, got, wireBody)
		}
		evs := sink.all()
		if !cl.wantEvent {
			continue
		}
		ev := evs[len(evs)-1]
		validEvent(t, ev)
		if bytes.Contains(ev, []byte("sk_live")) {
			t.Fatalf("key in event %s", ev)
		}
		ctx := parseEventContext(t, ev)
		if ctx.Request.HTTPRequestID != cl.name || ctx.Source.Kind != KindGateway || ctx.Method == "" {
			t.Fatalf("%s: context %+v", cl.name, ctx)
		}
		sameRecord(t, cl.name, ev, c.Last(), "")
	}
	n := 0
	for _, cl := range a2aCalls {
		if cl.wantEvent {
			n++
		}
	}
	if got := len(sink.all()); got != n {
		t.Fatalf("%d events; want %d", got, n)
	}
}
