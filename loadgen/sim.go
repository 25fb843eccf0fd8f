package loadgen

import (
	"container/heap"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"time"
)

// sim turns a scenario into a time-ordered sequence of events. It is
// deterministic for a seed: the same requests, rejections and retries at the
// same scenario times; the ids are drawn from a second generator seeded with
// the run id too, so that two runs never share message ids.
type sim struct {
	sc      *Scenario
	total   time.Duration
	scale   float64
	rng     *rand.Rand // timing and choices
	idr     *rand.Rand // ids
	runID   string
	q       actionQueue
	streams []stream
	buckets map[[2]int]*bucket
	callers map[string]int
	agents  map[string]int
	seq     uint64 // event sequence, for event ids
	aseq    uint64 // action sequence, for a stable order
	rpcSeq  uint64

	poisonAcc  float64
	poisonNext int // next poison index (count mode)

	requests int64
	admitted map[[2]string]int64

	clock func(time.Duration) time.Time // scenario time to wall time
}

type stream struct{ caller, agent int }

type actionKind uint8

const (
	actArrival actionKind = iota // next call of a stream
	actRetry                     // a caller retries a rejected call
	actBurst                     // many calls at once
	actPoison                    // a poison message (count mode)
)

type action struct {
	at     time.Duration
	seq    uint64
	kind   actionKind
	stream int
	req    *request
	burst  int
}

type actionQueue []*action

func (q actionQueue) Len() int { return len(q) }
func (q actionQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q actionQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *actionQueue) Push(x any)   { *q = append(*q, x.(*action)) }
func (q *actionQueue) Pop() any {
	old := *q
	a := old[len(old)-1]
	*q = old[:len(old)-1]
	return a
}

// emitted is what the sim hands to the driver: an event, or a poison value.
type emitted struct {
	at     time.Duration
	ev     *event // nil for poison
	poison string
	pvalue []byte
	key    string
}

// Streams of the timing generator: the scenario's, and the history's
// (history.go), so that an hour of history does not replay the scenario's
// first minutes draw for draw.
const (
	scenarioStream = 0x9e3779b97f4a7c15
	historyStream  = 0x5851f42d4c957f2d
)

// gatewayLagMax bounds how long after the agent a gateway's view of the same
// reply is observed (1..gatewayLagMax, whole milliseconds).
const gatewayLagMax = 30 * time.Millisecond

func newSim(sc *Scenario, runID string, scale float64) *sim {
	return newSimStream(sc, runID, scale, scenarioStream)
}

// newSimStream is newSim with the timing generator's stream chosen.
func newSimStream(sc *Scenario, runID string, scale float64, timing uint64) *sim {
	if scale <= 0 {
		scale = 1
	}
	h := uint64(14695981039346656037)
	for i := 0; i < len(runID); i++ {
		h = (h ^ uint64(runID[i])) * 1099511628211
	}
	s := &sim{
		sc: sc, total: sc.Total(), scale: scale, runID: runID,
		rng:      rand.New(rand.NewPCG(uint64(sc.Seed), timing)),
		idr:      rand.New(rand.NewPCG(uint64(sc.Seed)^h, h)),
		buckets:  map[[2]int]*bucket{},
		callers:  map[string]int{},
		agents:   map[string]int{},
		admitted: map[[2]string]int64{},
	}
	for i, a := range sc.Agents {
		s.agents[a.Name] = i
	}
	for i, c := range sc.Callers {
		s.callers[c.Name] = i
		for _, an := range c.Agents {
			st := stream{caller: i, agent: s.agents[an]}
			s.streams = append(s.streams, st)
			s.scheduleArrival(len(s.streams)-1, 0)
		}
	}
	for i, b := range sc.Bursts {
		s.push(&action{at: b.At, kind: actBurst, burst: i})
	}
	if n := sc.Poison.Count; n > 0 {
		s.push(&action{at: s.poisonAt(0), kind: actPoison})
	}
	return s
}

// continueIDs makes s go on with old's id streams (event sequence, JSON-RPC
// ids and the generator of message ids, request ids and error ids), so that
// no id of s repeats one of old: a looped scenario after its previous loop,
// the scenario after its history.
func (s *sim) continueIDs(old *sim) {
	s.seq, s.rpcSeq = old.seq, old.rpcSeq
	s.idr = rand.New(rand.NewPCG(old.idr.Uint64(), old.idr.Uint64()))
}

func (s *sim) push(a *action) {
	s.aseq++
	a.seq = s.aseq
	heap.Push(&s.q, a)
}

func (s *sim) poisonAt(i int) time.Duration {
	return time.Duration((float64(i) + 0.5) * float64(s.total) / float64(s.sc.Poison.Count))
}

// rate returns a stream's calls per second at scenario time t, and the next
// time after t at which it may change (0: never).
func (s *sim) rate(st stream, t time.Duration) (float64, time.Duration) {
	c := &s.sc.Callers[st.caller]
	r := c.RatePerMin / 60 * s.scale
	var change time.Duration
	note := func(at time.Duration) {
		if at > t && (change == 0 || at < change) {
			change = at
		}
	}
	var end time.Duration
	for _, p := range s.sc.Phases {
		if t >= end && t < end+p.Duration {
			r *= p.RateFactor
		}
		end += p.Duration
		note(end)
	}
	if c.Runaway.Factor > 0 {
		if t >= c.Runaway.From && (c.Runaway.Until == 0 || t < c.Runaway.Until) {
			r *= c.Runaway.Factor
		}
		note(c.Runaway.From)
		note(c.Runaway.Until)
	}
	return r, change
}

// scheduleArrival draws the stream's next call after t (a Poisson process
// whose rate may change at phase and runaway boundaries).
func (s *sim) scheduleArrival(i int, t time.Duration) {
	for t < s.total {
		r, change := s.rate(s.streams[i], t)
		if r <= 0 {
			if change == 0 {
				return
			}
			t = change
			continue
		}
		next := t + time.Duration(s.rng.ExpFloat64()/r*float64(time.Second))
		if change != 0 && next >= change {
			t = change // memoryless: draw again at the new rate
			continue
		}
		if next < s.total {
			s.push(&action{at: next, kind: actArrival, stream: i})
		}
		return
	}
}

// nextAt returns the scenario time of the next action, or -1 when done.
func (s *sim) nextAt() time.Duration {
	if len(s.q) == 0 {
		return -1
	}
	return s.q[0].at
}

// advance runs every action due at or before until, handing each produced
// message to emit in time order.
func (s *sim) advance(until time.Duration, emit func(*emitted)) {
	for len(s.q) > 0 && s.q[0].at <= until {
		a := heap.Pop(&s.q).(*action)
		switch a.kind {
		case actArrival:
			st := s.streams[a.stream]
			c := &s.sc.Callers[st.caller]
			q := s.newRequest(c, &s.sc.Agents[st.agent], c.Methods[s.rng.IntN(len(c.Methods))])
			s.call(a.at, st.caller, st.agent, q, emit)
			s.scheduleArrival(a.stream, a.at)
		case actRetry:
			s.call(a.at, s.callers[a.req.caller], s.agents[a.req.agent.Name], a.req, emit)
		case actBurst:
			b := &s.sc.Bursts[a.burst]
			ci, ai := s.callers[b.Caller], s.agents[b.Agent]
			for k := 0; k < b.Count; k++ {
				q := s.newRequest(&s.sc.Callers[ci], &s.sc.Agents[ai], b.Method)
				s.call(a.at, ci, ai, q, emit)
			}
		case actPoison:
			s.emitPoison(a.at, emit)
			s.poisonNext++
			if s.poisonNext < s.sc.Poison.Count {
				s.push(&action{at: s.poisonAt(s.poisonNext), kind: actPoison})
			}
		}
	}
}

func (s *sim) emitPoison(t time.Duration, emit func(*emitted)) {
	kinds := s.sc.Poison.Kinds
	kind := kinds[int(s.seq)%len(kinds)]
	if s.sc.Poison.Count > 0 {
		kind = kinds[s.poisonNext%len(kinds)]
	}
	s.seq++
	id := s.runID + ":poison-" + strconv.FormatUint(s.seq, 36) // "-" is not a base-36 digit: never a valid event id
	a := s.sc.Agents[s.rng.IntN(len(s.sc.Agents))].Name
	c := "unknown"
	if len(s.sc.Callers) > 0 {
		c = s.sc.Callers[s.rng.IntN(len(s.sc.Callers))].Name
	}
	emit(&emitted{at: t, poison: kind, key: a + "/" + c,
		pvalue: poisonValue(kind, id, s.wallHint(t).UnixMilli(), a, c, s.sc.Poison.TooLargeBytes)})
}

// call is one call (first try or retry) arriving at the agent at time t.
func (s *sim) call(t time.Duration, ci, ai int, q *request, emit func(*emitted)) {
	s.requests++
	a := &s.sc.Agents[ai]
	c := &s.sc.Callers[ci]
	key := [2]int{ai, ci}
	b := s.buckets[key]
	if b == nil {
		b = newBucket(a.Limit)
		s.buckets[key] = b
	}
	lim := a.Limit
	var overload, bare, gw *Fault
	for i := range s.sc.Faults {
		f := &s.sc.Faults[i]
		if f.Agent != a.Name || !f.active(t) {
			continue
		}
		switch f.Kind {
		case FaultOverload:
			overload = f
		case FaultLimit:
			lim = f.Limit
		case FaultBare500:
			bare = f
		case FaultGateway:
			gw = f
		}
	}
	if b.rate != lim.RatePerMin/60 || b.burst != lim.Burst {
		b.setLimit(lim)
	}
	r := rejection{limit: lim}
	switch ok, d := b.take(t); {
	case overload != nil && s.rng.Float64() < overload.Share:
		// Overload is decided before admission; the token is not spent.
		if ok {
			b.tokens++
		}
		r.kind, r.delay = KindOverload, overload.RetryAfter
	case !ok && bare == nil && a.Shape != "bare500":
		r.kind, r.delay = KindQuota, d
	case !ok:
		r.kind = KindUntyped
	case bare != nil && s.rng.Float64() < bare.Share:
		r.kind = KindUntyped
	default:
		s.admitted[[2]string{a.Name, c.Name}]++
		return
	}
	r.at = s.wallHint(t)
	r.errorID = "err_" + s.base32(20)
	r.variant = s.rng.IntN(4)
	rep := render(q, &r)
	s.seq++
	ev := &event{id: s.runID + ":" + strconv.FormatUint(s.seq, 36), sourceKind: "agent", sourceID: a.Instance,
		req: q, rep: rep, kind: r.kind}
	key2 := a.Name + "/" + c.Name
	emit(&emitted{at: t, ev: ev, key: key2})
	if gw != nil {
		s.seq++
		g := &event{id: s.runID + ":" + strconv.FormatUint(s.seq, 36), sourceKind: "gateway", sourceID: gw.Gateway,
			req: q, rep: gatewayView(rep, gw), kind: r.kind}
		emit(&emitted{at: t + time.Duration(1+s.rng.IntN(int(gatewayLagMax/time.Millisecond)))*time.Millisecond, ev: g, key: key2})
	}
	if s.sc.Poison.Count == 0 && s.sc.Poison.Share > 0 {
		s.poisonAcc += s.sc.Poison.Share
		for s.poisonAcc >= 1 {
			s.poisonAcc--
			s.emitPoison(t, emit)
		}
	}
	s.retry(t, c, q, &r)
}

// retry schedules the caller's next attempt according to its policy.
func (s *sim) retry(t time.Duration, c *Caller, q *request, r *rejection) {
	if c.Retry.Policy == "none" || q.attempt >= c.Retry.MaxAttempts {
		return
	}
	var wait time.Duration
	switch {
	case c.Retry.Policy == "ignore":
		wait = time.Duration(float64(c.Retry.Backoff) * (0.5 + s.rng.Float64()))
	case r.delay > 0: // honour the delay, plus up to a second of jitter (seed 002)
		wait = time.Duration(r.delay)*time.Second + time.Duration(s.rng.Float64()*float64(time.Second))
	default: // no hint: exponential backoff with full jitter
		wait = time.Duration(s.rng.Float64() * float64(time.Second<<min(q.attempt, 5)))
	}
	if t+wait >= s.total {
		return
	}
	n := *q
	n.attempt++
	n.httpReqID = "req_" + s.base32(26)
	n.jsonrpcID = s.nextRPCID()
	if c.Retry.RotateIDs {
		n.messageID = s.uuid()
		n.idemKey = c.Name + "-" + s.hex(8)
	}
	s.push(&action{at: t + wait, kind: actRetry, req: &n})
}

func (s *sim) newRequest(c *Caller, a *Agent, method string) *request {
	q := &request{agent: a, caller: c.Name, method: method, attempt: 1,
		httpReqID: "req_" + s.base32(26), jsonrpcID: s.nextRPCID(), messageID: s.uuid(),
		idemKey: c.Name + "-" + s.hex(8)}
	switch method {
	case "GetTask", "CancelTask", "tasks/get", "tasks/cancel", "SubscribeToTask":
		q.taskID = s.uuid()
	}
	return q
}

func (s *sim) nextRPCID() string {
	s.rpcSeq++
	return "req-" + strconv.FormatUint(s.rpcSeq, 10)
}

// wallHint is the wall time of scenario time t (see Config.Clock).
func (s *sim) wallHint(t time.Duration) time.Time {
	if s.clock == nil {
		return time.UnixMilli(0).Add(t)
	}
	return s.clock(t)
}

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func (s *sim) base32(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = crockford[s.idr.IntN(32)]
	}
	return string(b)
}

func (s *sim) hex(n int) string {
	b := make([]byte, (n+1)/2)
	for i := range b {
		b[i] = byte(s.idr.Uint32())
	}
	return hex.EncodeToString(b)[:n]
}

func (s *sim) uuid() string {
	var u [16]byte
	x, y := s.idr.Uint64(), s.idr.Uint64()
	for i := 0; i < 8; i++ {
		u[i], u[8+i] = byte(x>>(8*i)), byte(y>>(8*i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
