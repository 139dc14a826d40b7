package telemetry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseMetrics feeds arbitrary text through everything a scrape goes
// through: parsing, engine detection and mapping, raw series, the DCGM and
// node exporter readers, and the summary. Nothing may panic; an error is
// one clean line; what is kept can be written as JSON (no NaN or ±Inf).
func FuzzParseMetrics(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "scrape", "*.txt"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
		f.Add(string(b[:len(b)/2])) // cut mid-line
	}
	f.Add("vllm:num_requests_running NaN\nvllm:kv_cache_usage_perc +Inf\n")
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"0.5\"} 9\nh_count 3\n")
	f.Add("DCGM_FI_DEV_FB_USED{gpu=\"-1\"} 1e308\nDCGM_FI_DEV_CLOCKS_EVENT_REASONS{gpu=\"0\"} -5\n")
	f.Fuzz(func(t *testing.T, text string) {
		fams, err := parseMetrics(strings.NewReader(text))
		if err != nil {
			if strings.Contains(oneLine(err.Error()), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		var samples []Sample
		if em := detectEngine(fams); em != nil {
			samples = append(samples, Sample{TNS: 1, Source: KindServer, Instance: "a", Server: mapServer(em, fams)})
			samples = append(samples, Sample{TNS: 2, Source: KindServer, Instance: "a", Server: mapServer(em, fams)})
		} else {
			samples = append(samples, Sample{Source: KindServer, Server: &Server{Engine: "unknown"}, Raw: rawSeries(fams)})
		}
		for _, g := range dcgmGPUs(fams) {
			samples = append(samples, Sample{Source: KindGPU, GPU: g.gpu})
		}
		var n NodeSource
		samples = append(samples, Sample{Source: KindHost, Host: func() *Host { busy, steal := n.cpuPercent(fams); return &Host{CPUPercent: busy, StealPercent: steal} }()})
		if _, err := json.Marshal(samples); err != nil {
			t.Fatalf("samples cannot be written: %v", err)
		}
		if sp := summarizeServer(Window{From: 0, To: 3, Scale: 1, Samples: samples}); sp != nil {
			if _, err := json.Marshal(sp); err != nil {
				t.Fatalf("summary cannot be written: %v", err)
			}
		}
	})
}
