package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// promServerPoint is the part of points[].telemetry.server these tests read.
type promServerPoint struct {
	Running *promMeanMax   `json:"running"`
	Waiting *promMeanMax   `json:"waiting"`
	KV      *promMeanMax   `json:"kv_cache_usage"`
	TTFT    *promQuantiles `json:"ttft_ms"`
	Queue   *promQuantiles `json:"queue_ms"`
}

type promMeanMax struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

type promQuantiles struct {
	Count  float64              `json:"count"`
	P50    float64              `json:"p50"`
	P90    float64              `json:"p90"`
	P99    float64              `json:"p99"`
	Bucket map[string][]float64 `json:"bucket_ms"`
}

// TestPromSimulatorServerTelemetry runs the built binary against its
// simulator (8 sequence slots) with 12 streams: the server's own view, in
// summary.json, has the slots full and requests waiting, KV blocks in use,
// and server-side TTFT percentiles whose buckets agree with the client's
// TTFT (the engine's TTFT can only be shorter than what the client saw);
// telemetry.jsonl has the scraped vLLM series.
func TestPromSimulatorServerTelemetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, _, stderr := run(t, "run", "--concurrency", "12", "--requests", "48", "--output-tokens", "64", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Points []struct {
			TTFT struct {
				P50 float64 `json:"p50"`
			} `json:"ttft_ms"`
			Telemetry struct {
				Server *promServerPoint `json:"server"`
			} `json:"telemetry"`
		} `json:"points"`
	}
	readPromJSON(t, filepath.Join(dir, "summary.json"), &sum)
	if len(sum.Points) != 1 || sum.Points[0].Telemetry.Server == nil {
		t.Fatalf("summary points %+v: want one with server telemetry", sum.Points)
	}
	sp := sum.Points[0].Telemetry.Server
	if sp.Running == nil || sp.Running.Max != 8 || sp.Waiting == nil || sp.Waiting.Max <= 0 {
		t.Errorf("running %+v waiting %+v: want the 8 slots full and requests waiting", sp.Running, sp.Waiting)
	}
	if sp.KV == nil || !(sp.KV.Max > 0 && sp.KV.Max <= 1) {
		t.Errorf("kv_cache_usage %+v: want a fraction in (0, 1]", sp.KV)
	}
	for name, q := range map[string]*promQuantiles{"ttft_ms": sp.TTFT, "queue_ms": sp.Queue} {
		if q == nil || q.Count <= 0 || !(q.P50 <= q.P90 && q.P90 <= q.P99) {
			t.Fatalf("%s = %+v: want observations and ordered percentiles", name, q)
		}
		for _, p := range []struct {
			key string
			v   float64
		}{{"p50", q.P50}, {"p90", q.P90}, {"p99", q.P99}} {
			b := q.Bucket[p.key]
			if len(b) == 0 || p.v < b[0] || (len(b) == 2 && p.v > b[1]) {
				t.Errorf("%s %s = %v outside its bucket %v", name, p.key, p.v, b)
			}
		}
	}
	if lo := sp.TTFT.Bucket["p50"][0]; lo > sum.Points[0].TTFT.P50 {
		t.Errorf("server TTFT p50 lies in a bucket from %v ms, above the client's p50 %v ms", lo, sum.Points[0].TTFT.P50)
	}
	promCheckJSONL(t, filepath.Join(dir, "telemetry.jsonl"))
}

// promCheckJSONL: every server line maps the simulator as vLLM.
func promCheckJSONL(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s struct {
			Source string `json:"source"`
			Server *struct {
				Engine  string   `json:"engine"`
				Running *float64 `json:"running"`
			} `json:"server"`
		}
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		if s.Source == "server" {
			n++
			if s.Server == nil || s.Server.Engine != "vllm" || s.Server.Running == nil {
				t.Fatalf("server line %s: want vLLM's series", sc.Bytes())
			}
		}
	}
	if n < 2 {
		t.Errorf("%d server lines in telemetry.jsonl, want a series", n)
	}
}

func readPromJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}
