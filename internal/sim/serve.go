package sim

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ServeDefaultConfig is the default configuration of a simulator served on
// its own (servebench sim): in real time, because tools other than
// servebench cannot know it runs faster.
func ServeDefaultConfig() Config {
	cfg := DefaultConfig()
	cfg.TimeScale = ServeTimeScale
	return cfg
}

// ServeConfigFile is ServeDefaultConfig with the settings of a YAML
// configuration file over it ("": none), and whether the file sets the
// time scale itself. A file that cannot be read is an *fs.PathError.
func ServeConfigFile(file string) (cfg Config, scaleSet bool, err error) {
	cfg = ServeDefaultConfig()
	if file == "" {
		return cfg, false, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return cfg, false, err
	}
	if cfg, err = ParseConfigOver(cfg, data); err != nil {
		return cfg, false, err
	}
	return cfg, SetsTimeScale(data), nil
}

// LoadConfig reads a YAML configuration file over DefaultConfig
// (ParseConfig), for a simulator started by servebench run --sim-config.
// A file that cannot be read is an *fs.PathError.
func LoadConfig(file string) (Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(data)
}

// ListenError is an address a served simulator could not listen on.
type ListenError struct {
	Addr string
	Err  error
}

func (e *ListenError) Error() string { return fmt.Sprintf("listening on %s: %v", e.Addr, e.Err) }
func (e *ListenError) Unwrap() error { return e.Err }

// Serve serves cfg at addr (host:port; port 0 picks a free one) until ctx
// is done, after saying on w what it serves where (WriteBanner).
func Serve(ctx context.Context, cfg Config, addr string, w io.Writer) error {
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	url, err := srv.Start(ctx, addr)
	if err != nil {
		return &ListenError{Addr: addr, Err: err}
	}
	WriteBanner(w, cfg, url)
	<-ctx.Done()
	return nil
}

// SetsTimeScale reports whether a configuration file's data sets the time
// scale itself (left unset, the loader's default applies).
func SetsTimeScale(data []byte) bool {
	var top map[string]any
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, set := top["time_scale"]
	return set
}

// WriteBanner says what a served simulator serves at url, how fast, and
// with which slots and KV cache.
func WriteBanner(w io.Writer, cfg Config, url string) {
	d := cfg.Derived()
	fmt.Fprintf(w, "servebench sim: serving %q at %s\n", cfg.Model.Name, url)
	fmt.Fprintf(w, "  APIs: %s\n", strings.Join([]string{"/v1/chat/completions", "/v1/completions", "/v1/models",
		"/tokenize", "/metrics", "/api/chat", "/api/generate"}, " "))
	if cfg.TimeScale == 1 {
		fmt.Fprintf(w, "  real time (batch-1 decode %.0f tok/s, 512-token TTFT %.2f ms)\n",
			d.Batch1DecodeTPS, d.TTFT512.Seconds()*1e3)
	} else {
		fmt.Fprintf(w, "  time scale %g: a client measures model time / %g (batch-1 decode %.0f tok/s, 512-token TTFT %.2f ms as seen);\n  responses carry %s: %g, and servebench reports model time\n",
			cfg.TimeScale, cfg.TimeScale, d.Batch1DecodeTPS*cfg.TimeScale, cfg.Wall(d.TTFT512).Seconds()*1e3, TimeScaleHeader, cfg.TimeScale)
	}
	fmt.Fprintf(w, "  %d slots, KV cache %d tokens, preemption %s; Ctrl-C stops\n",
		cfg.Engine.MaxNumSeqs, d.KVCapacityTokens, cfg.Engine.Preemption)
}
