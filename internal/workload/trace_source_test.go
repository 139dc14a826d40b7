package workload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/servebench/servebench/internal/record"
)

// The source's prompts are as long as the trace says, under a completions
// and a templated chat API, and two requests sharing a hash id share that
// block's text at the same place.
func TestTraceSourceBlocks(t *testing.T) {
	ctx := context.Background()
	body := `{"timestamp": 0, "input_length": 1000, "output_length": 7, "hash_ids": [1, 2]}
{"timestamp": 10, "input_length": 1600, "output_length": 8, "hash_ids": [1, 2, 3]}
{"timestamp": 20, "input_length": 700, "output_length": 9, "hash_ids": [4, 2]}
{"timestamp": 30, "input_length": 1200, "output_length": 9, "hash_ids": [1]}
`
	tr, err := ScanTrace(TraceOptions{Path: writeTrace(t, "m.jsonl", body)})
	if err != nil {
		t.Fatal(err)
	}
	for _, chat := range []bool{false, true} {
		c := &words{chat: chat}
		src, err := tr.Source(env(c, chat))
		if err != nil {
			t.Fatal(err)
		}
		var items []Item
		for {
			it, err := src.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("chat %v: %v", chat, err)
			}
			items = append(items, it)
		}
		wantIn := []int{1000, 1600, 700, 1200}
		if len(items) != 4 {
			t.Fatalf("chat %v: %d items", chat, len(items))
		}
		for i, it := range items {
			n, _ := newSizer(c, chat).count(ctx, user(it.Prompt))
			if it.Want != wantIn[i] || it.Tokens != wantIn[i] || n != wantIn[i] || it.TraceLine != int64(i+1) || it.MaxTokens != 7+min(i, 2) {
				t.Errorf("chat %v request %d: want %d tokens %d (counted %d) line %d max %d", chat, i, it.Want, it.Tokens, n, it.TraceLine, it.MaxTokens)
			}
		}
		w := func(it Item) []string { return strings.Fields(it.Prompt) }
		// 1 and 2 share block 1 and the start of block 2 (1 has it partial;
		// words: one token each, the first
		// block's BOS aside), 3 starts with id 4 and shares nothing
		a, b, d, e := w(items[0]), w(items[1]), w(items[2]), w(items[3])
		if !equal(a[:990], b[:990]) || equal(a[:20], d[:20]) || !equal(a[:511], e[:511]) {
			t.Errorf("chat %v: shared blocks differ, or distinct ones agree", chat)
		}
		// the id alone fixes a block's text (in a Mooncake trace an id
		// implies the ids before it, so this does not add reuse)
		if !equal(a[511:531], d[511:531]) {
			t.Errorf("chat %v: id 2 after id 1 and after id 4: different words", chat)
		}
	}
}

// Without hash ids each prompt is words of its own.
func TestTraceSourcePlain(t *testing.T) {
	ctx := context.Background()
	tr, err := ScanTrace(TraceOptions{Path: shipped("azure.csv"), Max: 3})
	if err != nil {
		t.Fatal(err)
	}
	src, err := tr.Source(env(&words{}, false))
	if err != nil {
		t.Fatal(err)
	}
	var prev string
	for i := range 3 {
		it, err := src.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if it.Tokens != it.Want || it.TraceLine != int64(i+2) || it.Prompt[:30] == prev {
			t.Errorf("request %d: %d of %d tokens, line %d", i, it.Tokens, it.Want, it.TraceLine)
		}
		prev = it.Prompt[:30]
	}
	if _, err := src.Next(ctx); err != io.EOF {
		t.Errorf("after the window: %v", err)
	}
}

// genTrace is a Mooncake trace of n lines made as it is read: a file of
// any size, without the disk.
type genTrace struct {
	n, i int
	buf  bytes.Buffer
}

func (g *genTrace) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.i < g.n {
		fmt.Fprintf(&g.buf, `{"timestamp": %d, "input_length": 1500, "output_length": 100, "hash_ids": [%d, %d, %d]}`+"\n", g.i*10, g.i%97, g.i, g.i+1)
		g.i++
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// A large trace is read in bounded memory: the heap after half a million
// lines (about 45 MB of trace) is what it was after a few thousand, give
// or take the id set's bits.
func TestTraceBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 45 MB of generated trace")
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	r, err := NewTraceReader(&genTrace{n: 500_000}, "big.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	sc := newScan(TraceOptions{})
	var before uint64
	for i := 0; ; i++ {
		q, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.add(q, 0); err != nil {
			t.Fatal(err)
		}
		if i == 5000 {
			before = heap()
		}
	}
	after := heap()
	// 500,001 ids are 62 KB of bits; the samples fold into sketches
	if grew := int64(after) - int64(before); grew > 4<<20 || sc.n != 500_000 {
		t.Errorf("the heap grew by %d bytes over %d requests", grew, sc.n)
	}
}

// BenchmarkTraceScan reads a generated Mooncake trace through, as
// ScanTrace does; MB/s is the trace's bytes.
func BenchmarkTraceScan(b *testing.B) {
	var size int64
	for b.Loop() {
		g := &genTrace{n: 100_000}
		cr := &countReader{r: g}
		r, err := NewTraceReader(cr, "big.jsonl", "")
		if err != nil {
			b.Fatal(err)
		}
		sc := newScan(TraceOptions{})
		for {
			q, err := r.Next()
			if err != nil {
				break
			}
			_ = sc.add(q, 0)
		}
		size = cr.n
	}
	b.SetBytes(size)
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// FuzzTraceReader feeds any bytes to each format's reader: it returns
// requests or an error naming a line, and never panics or loops.
func FuzzTraceReader(f *testing.F) {
	for _, name := range []string{"mooncake.jsonl", "azure.csv", "burstgpt.csv"} {
		body, err := readShipped(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body[:min(len(body), 600)], "")
	}
	f.Add([]byte(`{"timestamp": 1e30, "input_length": 5, "output_length": 1}`), record.TraceMooncake)
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n\"1\",\"2\",3\n"), record.TraceBurstGPT)
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n0001-01-01 00:00:00,1,1\n"), record.TraceAzure)
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		r, err := NewTraceReader(bytes.NewReader(data), "f", format)
		if err != nil {
			return
		}
		sc := newScan(TraceOptions{})
		for i := 0; i <= len(data); i++ {
			q, err := r.Next()
			if err != nil {
				if err != io.EOF && !strings.HasPrefix(err.Error(), "f:") {
					t.Fatalf("an error that does not name the file: %v", err)
				}
				return
			}
			if q.Input <= 0 || q.Output <= 0 || q.At < 0 || q.Line < 1 {
				t.Fatalf("a request that passed the checks: %+v", q)
			}
			_ = sc.add(q, 0)
		}
		t.Fatalf("more requests than bytes")
	})
}

func readShipped(name string) ([]byte, error) { return os.ReadFile(shipped(name)) }
