package backend

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/sse"
)

// benchChunks is the number of content chunks each benchmark stream
// carries.
const benchChunks = 256

// fastServer streams benchChunks vLLM-shaped chunks as fast as it can,
// flushing each one so that each is a separate read for the client.
func fastServer() *httptest.Server {
	var chunks [][]byte
	chunks = append(chunks, []byte(chat(roleChunk)))
	for i := range benchChunks {
		chunks = append(chunks, []byte(content(fmt.Sprintf(" tok%d", i))))
	}
	chunks = append(chunks, []byte(usage(100, benchChunks)+done))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, c := range chunks {
			w.Write(c)
			f.Flush()
		}
	}))
}

// BenchmarkDo compares Do with the plainest possible client (read lines
// with bufio, count data lines, no parsing) on the same stream. Both
// report chunks/s; their ratio is Do's cost. Allocations include the
// in-process server's, the same for both.
func BenchmarkDo(b *testing.B) {
	srv := fastServer()
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, API: record.APIOpenAIChat, Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	req := &Request{Prompt: "hi", MaxTokens: benchChunks}
	plain := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 256}}
	defer plain.CloseIdleConnections()
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)

	clients := map[string]func(b *testing.B) int{
		"servebench": func(b *testing.B) int {
			var rec record.Record
			c.Do(context.Background(), time.Now(), req, &rec)
			if rec.Error != nil {
				b.Fatal(rec.Error)
			}
			return len(rec.Chunks)
		},
		"plain": func(b *testing.B) int {
			resp, err := plain.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			n, r := 0, bufio.NewReader(resp.Body)
			for {
				line, err := r.ReadSlice('\n')
				if err != nil {
					b.Fatal(err)
				}
				if bytes.HasPrefix(line, []byte("data: [DONE]")) {
					return n
				}
				if bytes.HasPrefix(line, []byte("data: ")) {
					n++
				}
			}
		},
	}
	for _, name := range []string{"plain", "servebench"} {
		do := clients[name]
		b.Run(name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			chunks := 0
			for b.Loop() {
				chunks += do(b)
			}
			b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8)
			chunks := make(chan int, 1024)
			b.RunParallel(func(pb *testing.PB) {
				n := 0
				for pb.Next() {
					n += do(b)
				}
				chunks <- n
			})
			close(chunks)
			total := 0
			for n := range chunks {
				total += n
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkChunk is the cost of decoding one ordinary chunk of each wire
// into a stream (no network, no SSE framing): the scanner's share of Do.
func BenchmarkChunk(b *testing.B) {
	for _, tt := range []struct {
		name string
		api  *api
		data string
	}{
		{"openai", &openAIChat, `{"id":"chatcmpl-8f2c","object":"chat.completion.chunk","created":1732880000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}`},
		{"ollama", &ollamaChat, `{"model":"llama3.2","created_at":"2026-11-29T14:52:00.000Z","message":{"role":"assistant","content":" token"},"done":false}`},
	} {
		b.Run(tt.name, func(b *testing.B) {
			s := testStreamFor(tt.api, nil)
			ev := sse.Event{Data: []byte(tt.data), At: time.Now()}
			b.ReportAllocs()
			for b.Loop() {
				s.rec.Chunks = s.rec.Chunks[:0]
				if s.chunks.event(s, ev, false) {
					b.Fatal("the stream ended")
				}
			}
		})
	}
}
