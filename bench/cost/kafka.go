// The harness's Kafka reads: partitions, end offsets, a group's progress and state.

package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/segmentio/kafka-go"
)

// --- Kafka -----------------------------------------------------------------

func (h *harness) partitions(ctx context.Context) ([]int, error) {
	md, err := h.kc.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{h.topic}})
	if err != nil {
		return nil, err
	}
	var ps []int
	for _, t := range md.Topics {
		if t.Error != nil {
			return nil, t.Error
		}
		for _, p := range t.Partitions {
			ps = append(ps, p.ID)
		}
	}
	return ps, nil
}

func (h *harness) endOffsets(ctx context.Context) (map[int]int64, error) {
	ps, err := h.partitions(ctx)
	if err != nil {
		return nil, err
	}
	var req []kafka.OffsetRequest
	for _, p := range ps {
		req = append(req, kafka.LastOffsetOf(p))
	}
	res, err := h.kc.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{h.topic: req}})
	if err != nil {
		return nil, err
	}
	out := map[int]int64{}
	for _, p := range res.Topics[h.topic] {
		if p.Error != nil {
			return nil, p.Error
		}
		out[p.Partition] = p.LastOffset
	}
	return out, nil
}

// caughtUp says whether the group's committed offsets reached the end of
// every partition (lag 0).
func (h *harness) caughtUp(ctx context.Context, group string) (bool, error) {
	var ps []int
	for p := range h.hwm {
		ps = append(ps, p)
	}
	res, err := h.kc.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{h.topic: ps}})
	if err != nil {
		return false, err
	}
	got := 0
	for _, p := range res.Topics[h.topic] {
		if p.Error != nil {
			return false, p.Error
		}
		if p.CommittedOffset >= h.hwm[p.Partition] {
			got++
		}
	}
	return got == len(h.hwm), nil
}

func (h *harness) commitStart(ctx context.Context, group string) error {
	var cs []kafka.OffsetCommit
	for p := range h.hwm {
		cs = append(cs, kafka.OffsetCommit{Partition: p, Offset: 0})
	}
	res, err := h.kc.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1, Topics: map[string][]kafka.OffsetCommit{h.topic: cs}})
	if err != nil {
		return err
	}
	for _, p := range res.Topics[h.topic] {
		if p.Error != nil {
			return p.Error
		}
	}
	return nil
}

func (h *harness) waitStable(ctx context.Context, group string, limit time.Duration, cmd *exec.Cmd) error {
	end := time.Now().Add(limit)
	last := ""
	for time.Now().Before(end) {
		res, err := h.kc.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		if err == nil && len(res.Groups) == 1 {
			g := res.Groups[0]
			last = g.GroupState
			if g.Error == nil && g.GroupState == "Stable" && len(g.Members) > 0 {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if cmd != nil && cmd.ProcessState != nil {
			return errors.New("consumer exited before joining")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("group %s not Stable within %v (last state %q)", group, limit, last)
}
