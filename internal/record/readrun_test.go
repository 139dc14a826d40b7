package record

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadRun: a run.json decodes; a missing one is fs.ErrNotExist, for
// callers to whom records suffice; a damaged one is named.
func TestReadRun(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"schema":"servebench.run/v1","seed":7,"target":{"model":"m"}}`), 0o644)
	os.WriteFile(bad, []byte(`{"schema":`), 0o644)
	run, err := ReadRun(good)
	if err != nil || run.Seed != 7 || run.Target.Model != "m" {
		t.Errorf("good run.json: %+v, %v", run, err)
	}
	if _, err := ReadRun(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing run.json: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadRun(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("damaged run.json: %v, want an error naming %s", err, bad)
	}
}

// TestReaderDropsDuplicates: a record is unique by its id; a repeated one
// is dropped and its line listed, in either damaged-line mode.
func TestReaderDropsDuplicates(t *testing.T) {
	line := func(id int) string {
		return fmt.Sprintf(`{"schema":"servebench.record/v1","id":%d,"phase":"measured","sent_ns":1,"end_ns":2}`+"\n", id)
	}
	in := line(0) + line(1) + line(0) + line(2) + line(1) + line(1<<40) + line(1<<40)
	for _, skip := range []bool{false, true} {
		rd := NewReader(strings.NewReader(in))
		if skip {
			rd.SkipDamaged()
		}
		var got []int64
		for rd.Next() {
			got = append(got, rd.Record().ID)
		}
		want := []Duplicate{{3, 0}, {5, 1}, {7, 1 << 40}}
		if rd.Err() != nil || !reflect.DeepEqual(got, []int64{0, 1, 2, 1 << 40}) || !reflect.DeepEqual(rd.Duplicates(), want) {
			t.Errorf("skip %v: ids %v, duplicates %v, err %v; want 0 1 2 2^40 and %v", skip, got, rd.Duplicates(), rd.Err(), want)
		}
	}
}

// TestReaderCompletesRun: a point run.json lacks (the run was killed
// during it) is added with its load and span from the records; a nil run
// is rebuilt from the records alone.
func TestReaderCompletesRun(t *testing.T) {
	in := `{"schema":"servebench.record/v1","point":0,"load":{"concurrency":1},"id":0,"phase":"measured","api":"openai-chat","model":"m","sent_ns":10,"end_ns":20}
{"schema":"servebench.record/v1","point":1,"load":{"concurrency":4},"id":1,"phase":"measured","api":"openai-chat","model":"m","sent_ns":30,"end_ns":50}
{"schema":"servebench.record/v1","point":1,"load":{"concurrency":4},"id":2,"phase":"measured","api":"openai-chat","model":"m","sent_ns":35,"end_ns":70}
`
	read := func() *Reader {
		rd := NewReader(strings.NewReader(in))
		for rd.Next() {
		}
		return rd
	}
	run := read().Complete(&Run{Seed: 7, Points: []PointClient{{Index: 0, Load: Load{Concurrency: 1}, Client: ClientStats{Sent: 1}, Span: Span{StartNS: 10, EndNS: 20}}}})
	want := []PointClient{
		{Index: 0, Load: Load{Concurrency: 1}, Client: ClientStats{Sent: 1}, Span: Span{StartNS: 10, EndNS: 20}},
		{Index: 1, Load: Load{Concurrency: 4}, Span: Span{StartNS: 30, EndNS: 70}},
	}
	if run.Seed != 7 || !reflect.DeepEqual(run.Points, want) {
		t.Errorf("completed run %+v, want seed 7 and points %+v", run, want)
	}
	rebuilt := read().Complete(nil)
	if rebuilt == nil || rebuilt.Target.API != "openai-chat" || rebuilt.Target.Model != "m" || len(rebuilt.Points) != 2 {
		t.Errorf("rebuilt run %+v: want the target and both points from the records", rebuilt)
	}
}
