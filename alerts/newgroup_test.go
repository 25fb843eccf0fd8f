package alerts_test

import (
	"os"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestNewErrorGroupTicketAtMostHourlyPerAgent: the new-group alerts of one
// agent are batched into one notification, and a second one waits an hour
// (group_interval): at most one ticket per agent per hour, listing every
// group new then. The other tickets keep their own route.
func TestNewErrorGroupTicketAtMostHourlyPerAgent(t *testing.T) {
	b, err := os.ReadFile("alertmanager.yml")
	if err != nil {
		t.Fatal(err)
	}
	type route struct {
		Receiver      string   `yaml:"receiver"`
		Matchers      []string `yaml:"matchers"`
		GroupBy       []string `yaml:"group_by"`
		GroupInterval string   `yaml:"group_interval"`
		Routes        []route  `yaml:"routes"`
	}
	var cfg struct {
		Route route `yaml:"route"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	var found *route
	for i, r := range cfg.Route.Routes {
		if slices.Contains(r.Matchers, `alertname="ErrtrailNewErrorGroup"`) {
			found = &cfg.Route.Routes[i]
			break
		}
		if slices.Contains(r.Matchers, `severity="ticket"`) {
			t.Fatalf("the generic ticket route (group_interval %s) comes before the new-group route: it would take the alert", r.GroupInterval)
		}
	}
	if found == nil {
		t.Fatal("no route for ErrtrailNewErrorGroup")
	}
	if found.Receiver != "ticket" || found.GroupInterval != "1h" || !slices.Contains(found.GroupBy, "agent") || slices.Contains(found.GroupBy, "group") {
		t.Errorf("new-group route %+v; want the ticket receiver, grouped by agent (not by group), group_interval 1h", *found)
	}
}
