package calib

import (
	"fmt"

	"github.com/servebench/servebench/internal/sim"
)

// ServeConfig is cfg serving the model fitted to the run: its step model
// and overhead always, and its step noise and wander, slot count, KV cache
// (unbounded), context cap and served model name unless set says the user
// set that setting (by its field in sim's YAML, such as
// "engine.max_num_seqs").
func (c *Calibration) ServeConfig(cfg sim.Config, set func(field string) bool) sim.Config {
	fitted := c.Fit.SimConfig()
	cfg.Timer = fitted.Timer
	// The run's step noise and wander, as the predictions simulate them.
	if !set("jitter") {
		cfg.Jitter = fitted.Jitter
	}
	if !set("wander") && !set("wander_time") {
		cfg.Wander, cfg.WanderTime = fitted.Wander, fitted.WanderTime
	}
	if !set("engine.max_num_seqs") {
		cfg.Engine.MaxNumSeqs = fitted.Engine.MaxNumSeqs
	}
	cfg.Engine.OverheadIn = fitted.Engine.OverheadIn
	if !set("engine.kv_tokens") {
		cfg.Engine.KVTokens = fitted.Engine.KVTokens
	}
	if !set("model.max_model_len") {
		cfg.Model.MaxModelLen = fitted.Model.MaxModelLen
	}
	if !set("model.name") && c.Run.Summary.Run != nil && c.Run.Summary.Run.Target.Model != "" {
		cfg.Model.Name = c.Run.Summary.Run.Target.Model
	}
	return cfg
}

// ServeLine says which step model a simulator serving cfg (ServeConfig)
// took from the run in dir.
func (c *Calibration) ServeLine(dir string, cfg sim.Config) string {
	m := c.Fit.Model
	return fmt.Sprintf("step model fitted to %s: %.3g ms + %.3g ms/token above %.0f tokens + %.3g ms/sequence + %.3g ms/KV token; %.3g ms per request (spent in the %s); %d slots; step jitter ±%.3g%%, speed wander %.3g%% over %.3g s",
		dir, m.StepMS, m.PerTokenMS, m.MinTokens, m.PerSeqMS, m.PerKVTokenMS, m.RequestOverheadMS, cfg.Engine.OverheadIn, cfg.Engine.MaxNumSeqs,
		100*cfg.Jitter, 100*cfg.Wander, cfg.WanderTime)
}
