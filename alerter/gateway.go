package alerter

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// gateway reads the agent/gateway pairs: the same request (http_request_id,
// else message_id and attempt) reported by an agent-side and a
// gateway-side observer in the gateway window. Only agents that both kinds
// of observer reported in the window can have pairs: errors is ordered by
// agent, so the others' rows are not read.
func (s *Reader) gateway(ctx context.Context, db string, cfg *Config, sp Span, in *Input) error {
	gwFrom := sp.End - int64(cfg.Gateway.Window/time.Second)
	gatewaySQL := fmt.Sprintf(`SELECT agent, toUInt16(a_status), toUInt16(g_status), toUInt64(count()), toUInt64(sum(lost))
FROM
(
    SELECT agent,
        if(http_request_id != '', http_request_id, concat(message_id, '#', toString(attempt))) AS rk,
        anyIf(http_status, source_kind = 'agent') AS a_status,
        anyIf(http_status, source_kind = 'gateway') AS g_status,
        if(maxIf(typed, source_kind = 'agent') = 1 AND maxIf(typed, source_kind = 'gateway') = 0, 1, 0) AS lost,
        countIf(source_kind = 'agent') AS na,
        countIf(source_kind = 'gateway') AS ng
    FROM %[1]s
    WHERE observed_at >= toDateTime(%[2]d) AND observed_at <= toDateTime(%[3]d)
        AND source_kind IN ('agent', 'gateway') AND (http_request_id != '' OR message_id != '')%[4]s
        AND agent IN
        (
            SELECT agent FROM %[1]s
            WHERE observed_at >= toDateTime(%[2]d) AND observed_at <= toDateTime(%[3]d)
                AND source_kind IN ('agent', 'gateway')%[4]s
            GROUP BY agent
            HAVING min(source_kind) != max(source_kind)
        )
    GROUP BY agent, rk
    HAVING na > 0 AND ng > 0
)
GROUP BY agent, a_status, g_status`, errorsIn(db), gwFrom, sp.End, s.agentCond("agent"))
	gws := map[string]*GatewayStats{}
	err := s.query(ctx, QGateway, gatewaySQL, func(r driver.Rows) error {
		var agent string
		var as, gs uint16
		var n, lost uint64
		if err := r.Scan(&agent, &as, &gs, &n, &lost); err != nil {
			return err
		}
		g := gws[agent]
		if g == nil {
			g = &GatewayStats{Agent: agent}
			gws[agent] = g
		}
		g.Pairs += int64(n)
		g.BodyStripped += int64(lost)
		if as != gs {
			g.StatusDiffers += int64(n)
			g.Mangled += int64(n)
			g.Rewrites = append(g.Rewrites, Rewrite{int(as), int(gs), int64(n)})
		} else {
			g.Mangled += int64(lost)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, g := range gws {
		sort.Slice(g.Rewrites, func(i, j int) bool { return g.Rewrites[i].N > g.Rewrites[j].N })
		in.Gateways = append(in.Gateways, *g)
	}
	sort.Slice(in.Gateways, func(i, j int) bool { return in.Gateways[i].Agent < in.Gateways[j].Agent })
	return nil
}
