package emit

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"

	"github.com/errtrail/errtrail/emit/internal/emittest"
	"github.com/errtrail/errtrail/parse"
)

// The helpers shared with the tests of emit/kafkapub and emit/emitgrpc
// live in emit/internal/emittest; these names keep emit's tests short.
var (
	validEvent        = emittest.ValidEvent
	decodeMsg         = emittest.DecodeMsg
	sameRecord        = emittest.SameRecord
	parseEventContext = emittest.ParseEventContext
	readRaw           = emittest.ReadRaw
	isNotAnError      = emittest.IsNotAnError
	newWire           = emittest.NewWire
	withoutDate       = emittest.WithoutDate
	rateLimiter       = emittest.RateLimiter
	seed002Body       = emittest.Seed002Body
	kafkaTopic        = emittest.KafkaTopic
	readEvents        = emittest.ReadEvents
)

type wire = emittest.Wire

var _ = parse.ProtocolMCP

// capSink is a test sink (a fake, not Kafka) that keeps each event's JSON.
type capSink struct {
	mu     sync.Mutex
	events [][]byte
	drops  map[string]int
}

func (s *capSink) Publish(ev *Event) bool {
	b, err := ev.AppendJSON(nil)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	s.events = append(s.events, b)
	s.mu.Unlock()
	return true
}

func (s *capSink) CountDrop(reason string) {
	s.mu.Lock()
	if s.drops == nil {
		s.drops = map[string]int{}
	}
	s.drops[reason]++
	s.mu.Unlock()
}

func (s *capSink) all() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.events...)
}

// rawResponse builds an HTTP/1.1 response from a status, headers and body.
func rawResponse(status int, hs []Header, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	for _, h := range hs {
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}
