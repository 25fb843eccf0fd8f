package dashboards

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/errtrail/errtrail/schema"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
)

// RecordColumns are the columns of errors that schema.Lookup returns: every
// field of the normalized record, in the table's order.
func RecordColumns() []string {
	t := reflect.TypeOf(schema.ErrorRow{})
	cols := make([]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		if c := t.Field(i).Tag.Get("ch"); c != "" {
			cols = append(cols, c)
		}
	}
	return cols
}

// lookupSQL is schema.LookupQuery, the query support's CLI uses, with the id
// given by a Grafana variable and restricted to some id kinds. It reads
// error_lookup by its sorting key (id first) and errors by its sorting-key
// prefix, so neither table is scanned whatever the time range, and removes
// replayed duplicates (see schema.LookupQuery). It ignores the dashboard's
// time range on purpose: a customer's id may be old.
func lookupSQL(idVar string, kinds ...string) string {
	where := fmt.Sprintf("WHERE id = ${%s:sqlstring} AND id_kind IN ('%s')", idVar, strings.Join(kinds, "', '"))
	q := schema.LookupQuery(schema.Options{Database: "${database}"})
	q = strings.ReplaceAll(q, "WHERE id = ?", where)
	if strings.Contains(q, "?") || !strings.Contains(q, where) || !strings.HasSuffix(q, "\n"+schema.LookupQuerySettings) {
		panic("dashboards: schema.LookupQuery changed shape; update lookupSQL:\n" + q)
	}
	return strings.TrimSuffix(q, schema.LookupQuerySettings) + "LIMIT 1000\n" + schema.LookupQuerySettings
}

// Lookup is the support page: paste the error_id or request_id a customer
// quotes and get the stored records with every field.
func Lookup() *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder("errtrail / Support lookup").
		Uid(UIDLookup).
		Description("Every stored record whose error_id or request_id is the one given, through error_lookup (no scan, any age).").
		Tags([]string{"errtrail", "support"}).
		Time("now-24h", "now").Timezone("browser").
		WithVariable(clickhouseVar()).WithVariable(databaseVar()).WithVariable(errtrailURLVar()).
		WithVariable(textVar("error_id", "error_id", "").Description("aap.error.error_id or ErrorInfo metadata error_id, as the customer quotes it.")).
		WithVariable(textVar("request_id", "request_id", "").Description("AgentRelay request_id, RequestInfo requestId, or the X-Request-Id header of the reply or request.")).
		Link(dashLink("Overview", UIDOverview, "")).
		Link(pageLink("Story of this error_id in errtrail", "/errors?id=${error_id:percentencode}")).
		Link(pageLink("Story of this request_id in errtrail", "/errors?id=${request_id:percentencode}")).
		WithPanel(table.NewPanelBuilder().Title("Records with error_id = ${error_id}").
			Description("Rows of errors whose error_id is $error_id. The time range does not apply. Scroll right for every field; Inspect > Data downloads them.").
			Datasource(chRef()).
			WithTarget(CH(Table, lookupSQL("error_id", "error_id"))).
			NoValue("no record: enter an error_id above").
			Height(10).Span(24)).
		WithPanel(table.NewPanelBuilder().Title("Records with request_id = ${request_id}").
			Description("Rows of errors whose request_id or http_request_id is $request_id. The time range does not apply.").
			Datasource(chRef()).
			WithTarget(CH(Table, lookupSQL("request_id", "request_id", "http_request_id"))).
			NoValue("no record: enter a request_id above").
			Height(10).Span(24))
}
