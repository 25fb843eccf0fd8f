package dashboards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Datasource plugin ids and the uids that deploy/compose provisions. The
// dashboards reference the datasources through the variables $clickhouse and
// $prometheus, whose defaults are these uids, so an existing Grafana can pick
// its own.
const (
	ClickHousePlugin    = "grafana-clickhouse-datasource"
	PrometheusPlugin    = "prometheus"
	ClickHouseUID       = "errtrail-clickhouse"
	PrometheusUID       = "errtrail-prometheus"
	DefaultDatabaseName = "errtrail"
	// DefaultErrtrailURL is the default of $errtrail_url, the base URL of
	// errtrail's own pages (errtrail serve); set the variable to the
	// deployment's external URL.
	DefaultErrtrailURL = "http://localhost:19102"
)

// Dashboard uids. Alert annotations link to /d/<uid>.
const (
	UIDOverview = "errtrail-overview"
	UIDAgent    = "errtrail-agent"
	UIDLookup   = "errtrail-lookup"
	UIDPipeline = "errtrail-pipeline"
)

func chRef() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr(ClickHousePlugin), Uid: cog.ToPtr("${clickhouse}")}
}

func promRef() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr(PrometheusPlugin), Uid: cog.ToPtr("${prometheus}")}
}

// Query result shapes of the ClickHouse plugin (queryType, and format as
// grafana-plugin-sdk-go's sqlutil.FormatQueryOption).
const (
	TimeSeries = "timeseries"
	Table      = "table"
)

// SQLQuery builds one grafana-clickhouse-datasource query in the SQL editor.
// A time-series query returns a DateTime column first, then string columns
// (labels, one series per combination) and numeric columns (values), ordered
// by time: the plugin turns that long frame into wide series.
type SQLQuery struct {
	refID, sql, shape string
}

var _ cog.Builder[variants.Dataquery] = (*SQLQuery)(nil)

// CH returns a query of shape TimeSeries or Table.
func CH(shape, sql string) *SQLQuery { return &SQLQuery{refID: "A", sql: sql, shape: shape} }

// RefID sets the refId (default "A").
func (q *SQLQuery) RefID(id string) *SQLQuery { q.refID = id; return q }

// Build implements cog.Builder.
func (q *SQLQuery) Build() (variants.Dataquery, error) {
	format := 1 // table
	queryType := "table"
	switch q.shape {
	case TimeSeries:
		format, queryType = 0, "timeSeries"
	case Table:
	default:
		return nil, fmt.Errorf("dashboards: query shape %q", q.shape)
	}
	return variants.UnknownDataquery{
		"refId":      q.refID,
		"datasource": chRef(),
		"editorType": "sql",
		"queryType":  queryType,
		"format":     format,
		"rawSql":     q.sql,
	}, nil
}

// Prom returns a range query with a legend (refId A; set another with RefId
// for a panel's further queries).
func Prom(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().RefId("A").Expr(expr).LegendFormat(legend).Range().Datasource(promRef())
}

// PromInstant returns an instant query (stats of the latest value).
func PromInstant(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().RefId("A").Expr(expr).LegendFormat(legend).Instant().Datasource(promRef())
}

// Variables shared by the dashboards.

func dsVar(name, label, plugin, uid string) *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder(name).Label(label).Type(plugin).
		Current(dashboard.VariableOption{Text: strOpt(uid), Value: strOpt(uid)})
}

func clickhouseVar() *dashboard.DatasourceVariableBuilder {
	return dsVar("clickhouse", "ClickHouse", ClickHousePlugin, ClickHouseUID)
}

func prometheusVar() *dashboard.DatasourceVariableBuilder {
	return dsVar("prometheus", "Prometheus", PrometheusPlugin, PrometheusUID)
}

// databaseVar names the database of errtrail's tables (ingest
// --clickhouse.database).
func databaseVar() *dashboard.TextBoxVariableBuilder {
	return textVar("database", "Database", DefaultDatabaseName).
		Description("ClickHouse database of the errtrail tables (ingest --clickhouse.database).")
}

// errtrailURLVar is $errtrail_url: the one place the dashboards' links to
// errtrail's pages (story of an error, an agent's conformance report) take
// their host from.
func errtrailURLVar() *dashboard.TextBoxVariableBuilder {
	return textVar("errtrail_url", "errtrail pages", DefaultErrtrailURL).
		Description("Base URL of errtrail's support pages (errtrail serve --http.external-url).")
}

// pageLink is a dashboard link to one of errtrail's pages under $errtrail_url.
func pageLink(title, path string) cog.Builder[dashboard.DashboardLink] {
	return dashboard.NewDashboardLinkBuilder(title).Type(dashboard.DashboardLinkTypeLink).
		Url("${errtrail_url}" + path).TargetBlank(true).Icon("external link")
}

func textVar(name, label, def string) *dashboard.TextBoxVariableBuilder {
	return dashboard.NewTextBoxVariableBuilder(name).Label(label).
		DefaultValue(dashboard.StringOrMap{String: cog.ToPtr(def)}).
		Current(dashboard.VariableOption{Text: strOpt(def), Value: strOpt(def)})
}

func strOpt(s string) dashboard.StringOrArrayOfString {
	return dashboard.StringOrArrayOfString{String: cog.ToPtr(s)}
}

// bucket groups a DateTime column into buckets of the panel's interval. It
// replaces the plugin's $__timeInterval, whose toStartOfInterval does not
// exist on ClickHouse 18.16. Panels over the minute rollups set a minimum
// interval of 1m so a bucket never splits a minute.
func bucket(col string) string {
	return fmt.Sprintf("toDateTime(intDiv(toUInt32(%s), $__interval_s) * $__interval_s)", col)
}

// link to another dashboard keeping the time range.
func dashLink(title, uid string, vars string) cog.Builder[dashboard.DashboardLink] {
	url := "/d/" + uid
	if vars != "" {
		url += "?" + vars
	}
	return dashboard.NewDashboardLinkBuilder(title).Type(dashboard.DashboardLinkTypeLink).
		Url(url).KeepTime(true).Icon("dashboard")
}

// linksTo is a field override that makes a column's cells a data link.
func linksTo(title, url string) []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{Id: "links", Value: []map[string]any{{"title": title, "url": url}}}}
}

// ts is a time-series panel with the settings every errtrail graph shares.
func ts(title string) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().Title(title).
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
}

// single is a stat panel showing the latest value.
func single(title string) *stat.PanelBuilder {
	return stat.NewPanelBuilder().Title(title).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		Orientation(common.VizOrientationAuto)
}

func row(title string) *dashboard.RowBuilder { return dashboard.NewRowBuilder(title) }

func legendTable(calcs ...string) *common.VizLegendOptionsBuilder {
	return common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeTable).
		Placement(common.LegendPlacementBottom).ShowLegend(true).Calcs(calcs)
}

func stacked() *common.StackingConfigBuilder {
	return common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)
}

func sumTotal() cog.Builder[common.TableFooterOptions] {
	return common.NewTableFooterOptionsBuilder().Show(true).Reducer([]string{"sum"})
}

func thresholds(steps ...dashboard.Threshold) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(steps)
}

func step(v *float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Value: v, Color: color}
}

func f(v float64) *float64 { return &v }
