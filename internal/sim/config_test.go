package sim

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestDefaultDerivedFigures(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d := c.Derived()
	// K and V × 32 layers × 8 KV heads × 128 dims × 2 bytes.
	if got, want := d.KVBytesPerToken, 2.0*32*8*128*2; got != want {
		t.Errorf("KV bytes/token = %v, want %v", got, want)
	}
	// vLLM's rule: (79.22 GiB × 0.9 − 8.03e9 × 2 bytes of weights − the
	// profile run's activations, 8192 × (3 × 14336 + 8 × 4096) × 2 B +
	// 256 × 128256 × 4 B, − 1.8 GiB non-torch) / KV bytes per token, in
	// whole blocks.
	act := 8192*(3*14336+8*4096)*2 + 256*128256*4.0
	wantBlocks := int((79.22*(1<<30)*0.9 - 8030261248*2 - act - 1.8*(1<<30)) / d.KVBytesPerToken / 16)
	if d.KVBlocks != wantBlocks || d.KVCapacityTokens != wantBlocks*16 {
		t.Errorf("KV capacity = %d blocks / %d tokens, want %d blocks", d.KVBlocks, d.KVCapacityTokens, wantBlocks)
	}
	// An 8B BF16 model on an H100: published batch-1 decode is 137 tok/s
	// (Qwen3-8B, vLLM) to 154 tok/s (Llama-3.1-8B); prefill ~25-30k tok/s.
	if d.Batch1DecodeTPS < 130 || d.Batch1DecodeTPS > 160 {
		t.Errorf("batch-1 decode = %.1f tok/s, want 130-160", d.Batch1DecodeTPS)
	}
	if d.PrefillTPS < 20e3 || d.PrefillTPS > 35e3 {
		t.Errorf("prefill = %.0f tok/s, want 20k-35k", d.PrefillTPS)
	}
	if d.DecodeBound != "bandwidth-bound" || d.PrefillBound != "compute-bound" {
		t.Errorf("bounds: decode %s, prefill %s", d.DecodeBound, d.PrefillBound)
	}
	if d.MaxModelLen != 131072 {
		t.Errorf("max_model_len = %d", d.MaxModelLen)
	}
}

func TestKVTokensOverrideCapsMaxModelLen(t *testing.T) {
	c := DefaultConfig()
	c.Engine.KVTokens = 1000 // 62 whole blocks
	if got, want := c.KVCapacityTokens(), 992; got != want {
		t.Errorf("capacity = %d, want %d", got, want)
	}
	if got := c.EffectiveMaxModelLen(); got != 992 {
		t.Errorf("effective max_model_len = %d, want 992", got)
	}
}

func TestParseConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, field string
	}{
		{"wrong type", "engine:\n  max_num_seqs: many\n", "engine.max_num_seqs"},
		{"float for int", "model:\n  layers: 1.5\n", "model.layers"},
		{"unknown field", "engine:\n  max_seqs: 4\n", "engine.max_seqs"},
		{"unknown section", "gpu: {}\n", "gpu"},
		{"list for section", "device: [1, 2]\n", "device"},
		{"mapping for value", "seed: {a: 1}\n", "seed"},
		{"negative", "time_scale: -2\n", "time_scale"},
		{"zero", "model:\n  kv_heads: 0\n", "model.kv_heads"},
		{"efficiency above 1", "device:\n  compute_efficiency: 1.5\n", "device.compute_efficiency"},
		{"bad policy", "engine:\n  preemption: swap\n", "engine.preemption"},
		{"bad overhead place", "engine:\n  overhead_in: api\n", "engine.overhead_in"},
		{"kv below a block", "engine:\n  kv_tokens: 3\n", "engine.kv_tokens"},
		{"no room for KV", "device:\n  memory_gib: 10\n", "device.memory_gib"},
		{"jitter", "jitter: 1\n", "jitter"},
		{"wander above its bound", "wander: 0.6\nwander_time: 1\n", "wander"},
		{"negative wander", "wander: -0.1\n", "wander"},
		{"wander without its time", "wander: 0.1\n", "wander_time"},
		{"negative wander time", "wander_time: -1\n", "wander_time"},
	} {
		_, err := ParseConfig([]byte(tc.yaml))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: got %v, want an error naming %s", tc.name, err, tc.field)
		}
	}
}

func TestParseConfigOverlaysDefaults(t *testing.T) {
	c, err := ParseConfig([]byte("engine:\n  max_num_seqs: 32\nmodel:\n  params: 7.0e9\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Engine.MaxNumSeqs, want.Model.Params = 32, 7e9
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
	if c, err := ParseConfig(nil); err != nil || c != DefaultConfig() {
		t.Errorf("empty file: %v, %+v", err, c)
	}
}

func TestWriteYAMLRoundTrips(t *testing.T) {
	c := DefaultConfig()
	c.Seed, c.Jitter, c.Engine.Preemption, c.Model.Name = 42, 0, PreemptReject, `odd "name": x`
	var buf bytes.Buffer
	if err := c.WriteYAML(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ParseConfig(buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if got != c {
		t.Errorf("round trip: got %+v, want %+v", got, c)
	}
	for _, s := range []string{"model time / time_scale", "KV capacity", "batch-1 decode"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("output lacks %q", s)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	var buf bytes.Buffer
	_ = DefaultConfig().WriteYAML(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte("engine:\n  max_num_seqs: 4\n"))
	f.Add([]byte("model: [1]\n"))
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Add([]byte("time_scale: .inf\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		d := c.Derived()
		if math.IsNaN(d.Batch1DecodeTPS) || d.KVCapacityTokens < c.Engine.BlockSize {
			t.Fatalf("derived figures broken: %+v", d)
		}
		var out bytes.Buffer
		if err := c.WriteYAML(&out); err != nil {
			t.Fatal(err)
		}
		back, err := ParseConfig(out.Bytes())
		if err != nil || back != c {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, back, c)
		}
	})
}

// TestWriteYAMLScaleUnsetKeepsLoaderScale: with time_scale unset, the
// printed file loaded over any base keeps that base's scale and changes
// no other field.
func TestWriteYAMLScaleUnsetKeepsLoaderScale(t *testing.T) {
	c := DefaultConfig()
	c.TimeScale = ServeTimeScale
	var buf bytes.Buffer
	if err := c.WriteYAMLScaleUnset(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ParseConfig(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultConfig(); got != want {
		t.Errorf("loaded over the defaults: got %+v, want %+v", got, want)
	}
	if ch := got.Changes(DefaultConfig()); len(ch) != 0 {
		t.Errorf("Changes = %q, want none", ch)
	}
	got.Device.MemBandwidthGBs = 6700
	if ch, want := got.Changes(DefaultConfig()), "device.mem_bandwidth_gbs 6700 (default 3350)"; len(ch) != 1 || ch[0] != want {
		t.Errorf("Changes = %q, want [%q]", ch, want)
	}
}
