package dashboards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Values stand in for what Grafana and the ClickHouse plugin substitute when
// a dashboard runs a query.
type Values struct {
	Name      string // names the set in test output
	From, To  time.Time
	IntervalS int               // $__interval_s: the panel interval in seconds
	Vars      map[string]string // template variables by name, raw values
}

// TestValues are the value sets the SQL checks run every query with: plain
// values, then values that need quoting (a caller, both ids).
func TestValues(database string) []Values {
	to := time.Now().UTC().Truncate(time.Minute)
	from := to.Add(-6 * time.Hour)
	return []Values{
		{Name: "plain", From: from, To: to, IntervalS: 60, Vars: map[string]string{
			"database": database, "agent": "agent-a", "caller": "",
			"error_id": "err-0001", "request_id": "req-0001",
		}},
		{Name: "quoted", From: from, To: to, IntervalS: 300, Vars: map[string]string{
			"database": database, "agent": "agent-a", "caller": "o'brien",
			"error_id": "it's", "request_id": "x' OR '1'='1",
		}},
	}
}

var (
	reVar      = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([a-z]+))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
	reTimeFilt = regexp.MustCompile(`\$__timeFilter\(\s*([^()]+?)\s*\)`)
)

// Expand substitutes Grafana's template variables (${name}, $name,
// ${name:sqlstring}) the way Grafana's frontend does, then the ClickHouse
// plugin's macros ($__timeFilter(col), $__fromTime, $__toTime,
// $__interval_s) the way the plugin's backend does. Any other $ form is an
// error: a query must not depend on something the checks do not model.
func Expand(sql string, v Values) (string, error) {
	var err error
	out := reVar.ReplaceAllStringFunc(sql, func(m string) string {
		sub := reVar.FindStringSubmatch(m)
		name, format := sub[1], sub[2]
		if name == "" {
			name = sub[3]
		}
		if strings.HasPrefix(name, "__") {
			return m // a macro, below
		}
		val, ok := v.Vars[name]
		if !ok {
			err = fmt.Errorf("variable $%s has no value", name)
			return m
		}
		switch format {
		case "":
			return val
		case "sqlstring":
			return "'" + strings.ReplaceAll(val, "'", "''") + "'"
		default:
			err = fmt.Errorf("variable format %q of $%s not modelled", format, name)
			return m
		}
	})
	if err != nil {
		return "", err
	}
	from, to := v.From.Unix(), v.To.Unix()
	out = reTimeFilt.ReplaceAllStringFunc(out, func(m string) string {
		col := reTimeFilt.FindStringSubmatch(m)[1]
		return fmt.Sprintf("%s >= toDateTime(%d) AND %s <= toDateTime(%d)", col, from, col, to)
	})
	out = strings.NewReplacer(
		"$__fromTime", fmt.Sprintf("toDateTime(%d)", from),
		"$__toTime", fmt.Sprintf("toDateTime(%d)", to),
		"$__interval_s", strconv.Itoa(max(v.IntervalS, 1)),
	).Replace(out)
	if i := strings.Index(out, "$"); i >= 0 {
		end := min(i+30, len(out))
		return "", fmt.Errorf("unexpanded %q", out[i:end])
	}
	return out, nil
}

// Query is one ClickHouse query of a dashboard.
type Query struct {
	Dashboard string // uid
	Where     string // panel title, or "variable <name>"
	RefID     string `json:",omitempty"`
	Raw       string // as stored in the dashboard
	Values    string `json:",omitempty"` // name of the value set of SQL
	SQL       string `json:",omitempty"` // expanded
}

// Queries extracts every ClickHouse query from the dashboard's JSON: panel
// targets (rows' nested panels too), annotation queries and query variables
// whose datasource is the ClickHouse plugin. It reads the rendered JSON, not the builders, so it
// sees what Grafana will.
func (s Spec) Queries() ([]Query, error) {
	b, err := s.JSON()
	if err != nil {
		return nil, err
	}
	var d struct {
		Panels      []jsonPanel `json:"panels"`
		Annotations struct {
			List []struct {
				Name       string  `json:"name"`
				Datasource *jsonDS `json:"datasource"`
				Target     *struct {
					RawSQL string `json:"rawSql"`
				} `json:"target"`
			} `json:"list"`
		} `json:"annotations"`
		Templating struct {
			List []struct {
				Name       string          `json:"name"`
				Type       string          `json:"type"`
				Datasource *jsonDS         `json:"datasource"`
				Query      json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	var out []Query
	var walk func([]jsonPanel)
	walk = func(ps []jsonPanel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if t.Datasource != nil && t.Datasource.Type == ClickHousePlugin {
					out = append(out, Query{Dashboard: s.UID, Where: p.Title, RefID: t.RefID, Raw: t.RawSQL})
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, a := range d.Annotations.List {
		if a.Datasource != nil && a.Datasource.Type == ClickHousePlugin && a.Target != nil {
			out = append(out, Query{Dashboard: s.UID, Where: "annotation " + a.Name, Raw: a.Target.RawSQL})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" || v.Datasource == nil || v.Datasource.Type != ClickHousePlugin {
			continue
		}
		var sql string
		if err := json.Unmarshal(v.Query, &sql); err != nil {
			return nil, fmt.Errorf("dashboards: %s: variable %s: query is not a string: %w", s.UID, v.Name, err)
		}
		out = append(out, Query{Dashboard: s.UID, Where: "variable " + v.Name, Raw: sql})
	}
	return out, nil
}

type jsonDS struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type jsonPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID      string  `json:"refId"`
		Datasource *jsonDS `json:"datasource"`
		RawSQL     string  `json:"rawSql"`
	} `json:"targets"`
	Panels []jsonPanel `json:"panels"`
}

// ExpandedQueries returns every ClickHouse query of every dashboard expanded
// with each value set, in a stable order.
func ExpandedQueries(sets []Values) ([]Query, error) {
	var out []Query
	for _, s := range All() {
		qs, err := s.Queries()
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			for _, v := range sets {
				sql, err := Expand(q.Raw, v)
				if err != nil {
					return nil, fmt.Errorf("dashboards: %s / %s: %w", q.Dashboard, q.Where, err)
				}
				e := q
				e.Values, e.SQL = v.Name, sql
				out = append(out, e)
			}
		}
	}
	return out, nil
}
