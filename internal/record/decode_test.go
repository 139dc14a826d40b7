package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var decodeLines = []string{
	`{"schema":"servebench.record/v1","point":0,"load":{"concurrency":2},"id":1,"phase":"measured","api":"a","prompt_tokens_requested":1,"output_tokens_requested":2,"prompt_tokens":1,"prompt_tokens_source":"local","output_tokens":2,"output_tokens_source":"usage","scheduled_ns":1,"sent_ns":2,"first_token_ns":3,"end_ns":9,"chunks":[{"t":1,"n":1},{"t":5,"n":1,"r":true}],"server":{"eval_count":3}}`,
	`{"chunks":[{"t":1,"n":1}],"phase":"warmup"}`,
	`{"phase":"warmup","chunks":[]}`,
	`{"phase":"warmup","chunks":[{"t":1,"n":1}],"Chunks":[{"t":2,"n":2}]}`,
	`{"phase":"warmup","chunks":[{"t":1,"n":1}],"chunks":[{"t":2,"n":2}]}`,
	`{"phase":"warmup","chunks":[{"t":01,"n":1}]}`,
	`{"phase":"warmup","chunks":[{"t":-0,"n":1}]}`,
	`{"phase":"warmup","chunks":[{"n":1,"t":1}]}`,
	`{"phase":"warmup","chunks":[{"t":1, "n":1}]}`,
	`{"phase":"warmup","chunks":[{"t":99999999999999999999,"n":1}]}`,
	`{"phase":"warmup","chunks":[{"t":-999999999999999999,"n":999999999999999999},{"t":9223372036854775807,"n":0},{"t":-9223372036854775808,"n":1}]}`,
	`{"phase":"warmup","model":"a \"chunks\":[x]","chunks":[{"t":1,"n":2}]}`,
	`{"phase":"warmup","server":{"chunks":[{"t":1,"n":1}]},"chunks":[{"t":3,"n":1}]}`,
	"{\"phase\":\"warmup\",\"chun\u212as\":[{\"t\":3,\"n\":1}]}",
	`{"phase":"warmup","chun\u006bs":[{"t":3,"n":1}]}`,
	`{"phase":"warmup","chunks":[{"t":1,"n":1}]} x`,
	`{"phase":"warmup","chunks":[{"t":1,"n":1}`,
	`{"phase":"warmup","chunks":null}`,
}

// checkDecode wants decode to read line exactly as json.Unmarshal does.
func checkDecode(t *testing.T, line []byte) {
	t.Helper()
	var got, want Record
	gerr, werr := decode(line, &got), json.Unmarshal(line, &want)
	if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("%s: decode %v, encoding/json %v", line, gerr, werr)
	}
	if gerr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n decode %+v\n  json  %+v", line, got, want)
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, l := range decodeLines {
		checkDecode(t, []byte(l))
	}
	// Every line encode writes reads back by hand, and equal.
	for i := range 50 {
		r := sample(int64(i))
		for k := range i {
			r.Chunks = append(r.Chunks, Chunk{AtNS: int64(k * 1000), Tokens: k % 3, Reasoning: k%4 == 0})
		}
		b, err := encode(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		line := bytes.TrimSpace(b)
		if start, end, ok := chunksMember(line); len(r.Chunks) > 0 && !ok {
			t.Fatalf("record %d: chunks not found by hand (%d, %d)", i, start, end)
		}
		checkDecode(t, line)
	}
}

// FuzzDecode holds decode to encoding/json on any line.
func FuzzDecode(f *testing.F) {
	for _, l := range decodeLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkDecode(t, line) })
}
