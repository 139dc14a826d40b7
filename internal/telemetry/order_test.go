package telemetry

import (
	"fmt"
	"slices"
	"testing"
)

// TestInTimeOrder: samples a tick or two out of order come out in time
// order, one moment's in the order scanned and the records' events after
// them; one later than the horizon comes where it came; events without
// samples are no telemetry.
func TestInTimeOrder(t *testing.T) {
	s := func(tns int64, id string) Sample { return Sample{TNS: tns, Source: KindClient, Instance: id} }
	e := func(tns int64, id string) Sample {
		return Sample{TNS: tns, Source: KindEvent, Instance: id, Event: &Event{Kind: EventOOM}}
	}
	var late []Sample
	for i := range reorderMoments + 2 {
		late = append(late, s(int64(10+i), fmt.Sprint("m", i)))
	}
	late = append(late, s(5, "late")) // 66 moments after the last release
	tests := []struct {
		name    string
		scanned []Sample
		extra   []Sample
		want    []string
	}{
		{"a tick or two behind", []Sample{s(2, "a"), s(1, "b"), s(3, "c"), s(2, "d"), s(1, "e")}, nil,
			[]string{"b", "e", "a", "d", "c"}},
		{"events after the samples of their moment", []Sample{s(2, "a"), s(1, "b")}, []Sample{e(2, "oom2"), e(0, "oom0"), e(3, "oom3")},
			[]string{"oom0", "b", "a", "oom2", "oom3"}},
		{"no sample, no events", nil, []Sample{e(1, "oom")}, nil},
		{"later than the horizon", late, nil,
			append([]string{"m0", "m1", "late"}, func() (ids []string) {
				for i := 2; i < reorderMoments+2; i++ {
					ids = append(ids, fmt.Sprint("m", i))
				}
				return ids
			}()...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := InTimeOrder(SliceScan(tc.scanned), tc.extra)(func(smp *Sample) { got = append(got, smp.Instance) })
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("order %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}
