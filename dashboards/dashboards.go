package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Spec is one dashboard: its uid, the file it is written to under json/, and
// its builder.
type Spec struct {
	UID   string
	File  string
	Build func() *dashboard.DashboardBuilder
}

// All lists errtrail's dashboards.
func All() []Spec {
	return []Spec{
		{UIDOverview, "overview.json", Overview},
		{UIDAgent, "agent.json", Agent},
		{UIDLookup, "lookup.json", Lookup},
		{UIDPipeline, "pipeline.json", Pipeline},
	}
}

// JSON builds the dashboard and renders it as indented JSON with a final
// newline, the form committed under json/.
func (s Spec) JSON() ([]byte, error) {
	d, err := s.Build().Build()
	if err != nil {
		return nil, fmt.Errorf("dashboards: build %s: %w", s.UID, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("dashboards: encode %s: %w", s.UID, err)
	}
	return buf.Bytes(), nil
}
