// Package plan owns capacity planning before a server is started: a model's
// shape (from a Hugging Face config.json, its safetensors index or headers,
// or a GGUF header), weight and KV-cache formats, the embedded catalog of
// inference devices, each engine's memory semantics, the per-GPU memory
// budget, roofline latency and throughput estimates, and the comparison of
// those predictions with a measured run's summary.
//
// Everything here is arithmetic on published numbers; every estimate carries
// its basis, and docs/PLANNER.md defines each printed field and formula.
// The package returns values; rendering them is report's (report.Plan,
// report.PlanComparison). Its Format functions are the planner's units,
// shared by its own notes and by the rendering.
package plan
