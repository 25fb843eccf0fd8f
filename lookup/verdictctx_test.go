package lookup

import (
	"context"
	"testing"
	"time"
)

// TestUnitVerdictContextDeadline: with a budget the verdicts' queries get
// a deadline verdictGrace past it (the server's max_execution_time, through
// clickhouse-go), counted from the story's start; without one they get
// none of their own, and a caller's earlier deadline still wins. Pure unit
// test: no server.
func TestUnitVerdictContextDeadline(t *testing.T) {
	began := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	f := &Finder{VerdictBudget: 2 * time.Second}
	vctx, cancel := f.verdictContext(ctx, began)
	dl, ok := vctx.Deadline()
	if !ok || !dl.Equal(began.Add(2*time.Second+verdictGrace)) {
		t.Errorf("with a 2s budget: deadline %v (set %v), want %v", dl, ok, began.Add(2*time.Second+verdictGrace))
	}
	cancel()
	if vctx.Err() == nil {
		t.Error("cancel must end the verdicts' context")
	}
	if ctx.Err() != nil {
		t.Error("ending the verdicts' context must not end the story's")
	}

	f.VerdictBudget = 0
	vctx, cancel = f.verdictContext(ctx, began)
	if dl, ok := vctx.Deadline(); ok {
		t.Errorf("without a budget the verdicts' context must have no deadline of its own, has %v", dl)
	}
	cancel()
	if vctx.Err() == nil {
		t.Error("cancel must end the verdicts' context without a budget too")
	}

	short, stopShort := context.WithDeadline(ctx, began.Add(time.Second))
	defer stopShort()
	f.VerdictBudget = time.Minute
	vctx, cancel = f.verdictContext(short, began)
	defer cancel()
	if dl, _ := vctx.Deadline(); !dl.Equal(began.Add(time.Second)) {
		t.Errorf("the caller's earlier deadline must win: got %v", dl)
	}
}
