package sse

import (
	"bytes"
	"strings"
	"testing"
)

// chunk is a typical vLLM chat chunk.
const chunk = `data: {"id":"chatcmpl-8f2c","object":"chat.completion.chunk","created":1732880000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}` + "\n\n"

func BenchmarkDecoder(b *testing.B) {
	in := []byte(strings.Repeat(chunk, 1000))
	r := bytes.NewReader(in)
	d := NewEventStream(r, nil)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		r.Reset(in)
		d.Reset(r, nil)
		for d.Next() {
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkNDJSON(b *testing.B) {
	line := `{"model":"llama3.2","created_at":"2026-11-29T14:52:00.000Z","message":{"role":"assistant","content":" token"},"done":false}` + "\n"
	in := []byte(strings.Repeat(line, 1000))
	r := bytes.NewReader(in)
	d := NewNDJSON(r, nil)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		r.Reset(in)
		d.Reset(r, nil)
		for d.Next() {
			events++
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
