package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Scenario describes who calls whom, how often, with what limits and faults.
// It is read from YAML (or JSON, which is YAML) by LoadScenario or
// ParseScenario; see scenarios/*.yaml for commented examples.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Seed makes a run reproducible: same seed, same sequence of events
	// (only ids derived from the run id and the wall-clock timestamps differ).
	Seed int64 `yaml:"seed"`
	// Duration is the scenario time the run covers. Zero means the sum of the
	// phase durations.
	Duration time.Duration `yaml:"duration"`

	Agents  []Agent  `yaml:"agents"`
	Callers []Caller `yaml:"callers"`
	// Methods used by callers that name none.
	Methods []string `yaml:"methods"`
	Phases  []Phase  `yaml:"phases"`
	Bursts  []Burst  `yaml:"bursts"`
	Faults  []Fault  `yaml:"faults"`
	Poison  Poison   `yaml:"poison"`

	dir string // folder of the scenario file, for corpus templates
}

// Agent is one agent (or agent instance) whose limiter the tool simulates.
type Agent struct {
	Name     string `yaml:"name"`
	Endpoint string `yaml:"endpoint"`
	// Shape selects the reply templates: a2a-http, a2a-jsonrpc, a2a-grpc,
	// aap, agentrelay, agentrelay-rest, bare500, or corpus:<file> (a capture
	// under parse/testdata/corpus/, see corpus.go).
	Shape string `yaml:"shape"`
	// JSONRPCStatus is the HTTP status JSON-RPC errors travel with for the
	// a2a-jsonrpc shape: 429 (seed 002's choice for callers you control,
	// the default) or 200.
	JSONRPCStatus int    `yaml:"jsonrpc_status"`
	Domain        string `yaml:"domain"` // ErrorInfo domain; default agents.example.com
	Limit         Limit  `yaml:"limit"`
	// Instance is source.id for the agent's own observations (default
	// <name>-0).
	Instance string `yaml:"instance"`

	corpus *corpusTemplate
}

// Limit is a per-caller token bucket: RatePerMin tokens a minute, at most
// Burst stored. RatePerMin 0 means no limit.
type Limit struct {
	RatePerMin float64 `yaml:"rate_per_min"`
	Burst      float64 `yaml:"burst"`
	Policy     string  `yaml:"policy"` // name put in ErrorInfo metadata; default per-caller
}

// Caller sends requests to agents.
type Caller struct {
	Name string `yaml:"name"`
	// Agents this caller calls; empty means all.
	Agents []string `yaml:"agents"`
	// RatePerMin is the baseline request rate to each of its agents.
	RatePerMin float64  `yaml:"rate_per_min"`
	Methods    []string `yaml:"methods"`
	// Behaviour is a shorthand: normal (honours Retry-After, same ids),
	// runaway (see Runaway), ignores-retry-after, rotates-ids, no-retry.
	Behaviour string  `yaml:"behaviour"`
	Runaway   Runaway `yaml:"runaway"`
	Retry     Retry   `yaml:"retry"`
	// Count > 1 expands this entry into Count callers named name-1..name-N.
	Count int `yaml:"count"`
}

// Runaway multiplies a caller's rate by Factor from From until Until (zero:
// to the end), as a retry loop gone wrong would.
type Runaway struct {
	Factor float64       `yaml:"factor"`
	From   time.Duration `yaml:"from"`
	Until  time.Duration `yaml:"until"`
}

// Retry says what a caller does with a rejection.
type Retry struct {
	// Policy: honour (wait the delay given + up to 1 s jitter), ignore (retry
	// after Backoff whatever the delay), none.
	Policy      string        `yaml:"policy"`
	MaxAttempts int           `yaml:"max_attempts"` // including the first; default 3 (ignore: 6)
	Backoff     time.Duration `yaml:"backoff"`      // for policy ignore; default 200ms
	RotateIDs   bool          `yaml:"rotate_ids"`   // new messageId and idempotency key per retry
}

// Phase scales all callers' rates for a span of scenario time.
type Phase struct {
	Name       string        `yaml:"name"`
	Duration   time.Duration `yaml:"duration"`
	RateFactor float64       `yaml:"rate_factor"` // default 1
}

// Burst sends Count calls at once from one caller to one agent.
type Burst struct {
	At     time.Duration `yaml:"at"`
	Caller string        `yaml:"caller"`
	Agent  string        `yaml:"agent"`
	Method string        `yaml:"method"`
	Count  int           `yaml:"count"`
}

// Fault kinds.
const (
	FaultOverload = "overload" // agent answers 503/UNAVAILABLE/AGENT_OVERLOADED to Share of calls
	FaultLimit    = "limit"    // agent's limit replaced by Limit for the window
	FaultBare500  = "bare500"  // rejections become bare 500s, and Share of admitted calls crash
	FaultGateway  = "gateway"  // a gateway in front of the agent rewrites error replies
)

// Fault changes an agent's behaviour from From to To (zero To: to the end).
type Fault struct {
	Kind       string        `yaml:"kind"`
	Agent      string        `yaml:"agent"`
	From       time.Duration `yaml:"from"`
	To         time.Duration `yaml:"to"`
	Share      float64       `yaml:"share"`       // overload default 1; bare500 default 0.05
	RetryAfter int           `yaml:"retry_after"` // overload's delay in seconds; default 5
	Limit      Limit         `yaml:"limit"`       // for kind limit
	// Gateway: its id, the status it substitutes for error replies (0 keeps
	// the status; 502 is the classic), and whether it strips the body.
	Gateway     string `yaml:"gateway"`
	RewriteTo   int    `yaml:"rewrite_to"`
	RewriteFrom []int  `yaml:"rewrite_from"` // statuses rewritten; default all
	StripBody   bool   `yaml:"strip_body"`

	// passThrough: the gateway passes every reply on unchanged (the
	// gateway of a history, history.go).
	passThrough bool
}

// Poison kinds: each is dead-lettered by a conforming ingester.
const (
	PoisonMalformedJSON = "malformed_json"
	PoisonTooLarge      = "too_large"
	PoisonTooDeep       = "too_deep"
	PoisonInvalidUTF8   = "invalid_utf8"
	PoisonWrongTypes    = "wrong_types"
	PoisonEmpty         = "empty"
	PoisonNotJSON       = "not_json"
)

// PoisonKinds lists every poison kind in a fixed order.
var PoisonKinds = []string{PoisonMalformedJSON, PoisonTooLarge, PoisonTooDeep,
	PoisonInvalidUTF8, PoisonWrongTypes, PoisonEmpty, PoisonNotJSON}

// Poison mixes undecodable messages into the run: Count in all (or Share of
// the valid events when Count is 0), spread evenly over the scenario time,
// cycling through Kinds (default all).
type Poison struct {
	Count int      `yaml:"count"`
	Share float64  `yaml:"share"`
	Kinds []string `yaml:"kinds"`
	// TooLargeBytes is the size of too_large messages; default 1 MiB + 4 KiB.
	// They are compressible, so they pass a broker with the default
	// message.max.bytes when the writer compresses (the default).
	TooLargeBytes int `yaml:"too_large_bytes"`
}

// Total returns the scenario time the run covers.
func (s *Scenario) Total() time.Duration {
	if s.Duration > 0 {
		return s.Duration
	}
	var d time.Duration
	for _, p := range s.Phases {
		d += p.Duration
	}
	return d
}

// LoadScenario reads and validates a scenario file.
func LoadScenario(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseScenario(b, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScenario parses and validates a scenario. dir is where relative
// corpus template paths are resolved first (then the module root).
func ParseScenario(b []byte, dir string) (*Scenario, error) {
	var s Scenario
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	s.dir = dir
	if err := s.normalize(); err != nil {
		return nil, err
	}
	return &s, nil
}

var shapes = map[string]bool{"a2a-http": true, "a2a-jsonrpc": true, "a2a-grpc": true,
	"aap": true, "agentrelay": true, "agentrelay-rest": true, "bare500": true}

func (s *Scenario) normalize() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.Name == "" {
		bad("name is required")
	}
	if len(s.Agents) == 0 {
		bad("no agents")
	}
	if len(s.Methods) == 0 {
		s.Methods = []string{"SendMessage"}
	}
	agents := map[string]*Agent{}
	for i := range s.Agents {
		a := &s.Agents[i]
		if a.Name == "" {
			bad("agents[%d]: name is required", i)
			continue
		}
		if agents[a.Name] != nil {
			bad("agents[%d]: duplicate name %q", i, a.Name)
		}
		agents[a.Name] = a
		if a.Shape == "" {
			a.Shape = "a2a-jsonrpc"
		}
		if c, ok := strings.CutPrefix(a.Shape, "corpus:"); ok {
			t, err := loadCorpusTemplate(c, s.dir)
			if err != nil {
				bad("agents[%d] %s: %v", i, a.Name, err)
			}
			a.corpus = t
		} else if !shapes[a.Shape] {
			bad("agents[%d] %s: unknown shape %q", i, a.Name, a.Shape)
		}
		if a.JSONRPCStatus == 0 {
			a.JSONRPCStatus = 429
		}
		if a.Domain == "" {
			a.Domain = "agents.example.com"
		}
		if a.Endpoint == "" {
			a.Endpoint = "https://" + a.Name + ".agents.example/a2a"
		}
		if a.Instance == "" {
			a.Instance = a.Name + "-0"
		}
		if a.Limit.Policy == "" {
			a.Limit.Policy = "per-caller"
		}
		if a.Limit.RatePerMin < 0 || a.Limit.Burst < 0 {
			bad("agents[%d] %s: negative limit", i, a.Name)
		}
		if a.Limit.RatePerMin > 0 && a.Limit.Burst < 1 {
			a.Limit.Burst = 1
		}
	}
	var callers []Caller
	for i, c := range s.Callers {
		if c.Name == "" {
			bad("callers[%d]: name is required", i)
			continue
		}
		for _, n := range c.Agents {
			if agents[n] == nil {
				bad("callers[%d] %s: unknown agent %q", i, c.Name, n)
			}
		}
		if len(c.Agents) == 0 {
			for _, a := range s.Agents {
				c.Agents = append(c.Agents, a.Name)
			}
		}
		if len(c.Methods) == 0 {
			c.Methods = s.Methods
		}
		if c.RatePerMin < 0 {
			bad("callers[%d] %s: negative rate", i, c.Name)
		}
		switch c.Behaviour {
		case "", "normal":
			c.Behaviour = "normal"
		case "runaway":
			if c.Runaway.Factor <= 0 {
				c.Runaway.Factor = 50
			}
		case "ignores-retry-after":
			if c.Retry.Policy == "" {
				c.Retry.Policy = "ignore"
			}
		case "rotates-ids":
			c.Retry.RotateIDs = true
		case "no-retry":
			c.Retry.Policy = "none"
		default:
			bad("callers[%d] %s: unknown behaviour %q", i, c.Name, c.Behaviour)
		}
		switch c.Retry.Policy {
		case "":
			c.Retry.Policy = "honour"
		case "honour", "ignore", "none":
		default:
			bad("callers[%d] %s: unknown retry policy %q", i, c.Name, c.Retry.Policy)
		}
		if c.Retry.MaxAttempts <= 0 {
			c.Retry.MaxAttempts = 3
			if c.Retry.Policy == "ignore" {
				c.Retry.MaxAttempts = 6
			}
		}
		if c.Retry.Backoff <= 0 {
			c.Retry.Backoff = 200 * time.Millisecond
		}
		if c.Count > 1 {
			for k := 1; k <= c.Count; k++ {
				cc := c
				cc.Count = 0
				cc.Name = fmt.Sprintf("%s-%d", c.Name, k)
				callers = append(callers, cc)
			}
		} else {
			callers = append(callers, c)
		}
	}
	s.Callers = callers
	names := map[string]bool{}
	for _, c := range s.Callers {
		if names[c.Name] {
			bad("duplicate caller %q", c.Name)
		}
		names[c.Name] = true
	}
	for i := range s.Phases {
		if s.Phases[i].Duration <= 0 {
			bad("phases[%d]: duration must be > 0", i)
		}
		if s.Phases[i].RateFactor == 0 {
			s.Phases[i].RateFactor = 1
		}
	}
	if s.Total() <= 0 {
		bad("duration: give duration or phases (a run must end by itself)")
	}
	for i, b := range s.Bursts {
		if !names[b.Caller] {
			bad("bursts[%d]: unknown caller %q", i, b.Caller)
		}
		if agents[b.Agent] == nil {
			bad("bursts[%d]: unknown agent %q", i, b.Agent)
		}
		if b.Method == "" {
			s.Bursts[i].Method = s.Methods[0]
		}
		if b.Count <= 0 {
			bad("bursts[%d]: count must be > 0", i)
		}
	}
	for i := range s.Faults {
		f := &s.Faults[i]
		if agents[f.Agent] == nil {
			bad("faults[%d]: unknown agent %q", i, f.Agent)
		}
		switch f.Kind {
		case FaultOverload:
			if f.Share == 0 {
				f.Share = 1
			}
			if f.RetryAfter <= 0 {
				f.RetryAfter = 5
			}
		case FaultLimit:
			if f.Limit.RatePerMin <= 0 {
				bad("faults[%d]: limit needs limit.rate_per_min", i)
			}
			if f.Limit.Burst < 1 {
				f.Limit.Burst = 1
			}
			if f.Limit.Policy == "" && agents[f.Agent] != nil {
				f.Limit.Policy = agents[f.Agent].Limit.Policy
			}
		case FaultBare500:
			if f.Share == 0 {
				f.Share = 0.05
			}
		case FaultGateway:
			if f.Gateway == "" {
				f.Gateway = "gw-0"
			}
		default:
			bad("faults[%d]: unknown kind %q", i, f.Kind)
		}
		if f.Share < 0 || f.Share > 1 {
			bad("faults[%d]: share must be in [0,1]", i)
		}
		if f.To != 0 && f.To <= f.From {
			bad("faults[%d]: to must be after from", i)
		}
	}
	if len(s.Poison.Kinds) == 0 {
		s.Poison.Kinds = PoisonKinds
	}
	for _, k := range s.Poison.Kinds {
		ok := false
		for _, p := range PoisonKinds {
			ok = ok || p == k
		}
		if !ok {
			bad("poison: unknown kind %q", k)
		}
	}
	if s.Poison.TooLargeBytes <= 0 {
		s.Poison.TooLargeBytes = 1<<20 + 4<<10
	}
	return errors.Join(errs...)
}

// active reports whether scenario time t is inside the fault's window.
func (f *Fault) active(t time.Duration) bool {
	return t >= f.From && (f.To == 0 || t < f.To)
}
