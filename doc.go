// Package servebench runs servebench's benchmarks of LLM inference
// servers from Go programs and tests, as the servebench command does: it
// measures a server (or the built-in simulated server) under a list of
// loads, judges the result against a serving objective, compares two runs
// and plans a deployment before a server exists.
//
// The types a caller fills are plain structs whose zero values are
// servebench's defaults: a zero Target is the built-in simulator, a zero
// Workload sends 512-token prompts for 128 output tokens, zero Loads are
// concurrencies 1, 2, 4, 8 and 16, and zero Options run 100 requests per
// load, keeping the records in memory. Figures are defined in
// docs/METRICS.md; a Result's Summary is the content of summary.json
// (docs/OUTPUT.md).
//
// The servebench command reads and compares run directories through this
// API: report reads a run with OpenRuns (judging it, merging a sharded
// run's workers and drawing its page are the command's own), and compare
// reads each side with OpenRuns and compares them with Compare. Its run, and a Run or Judge
// here, start the target, check it, ask it what it is and measure its
// loads through one shared sequence, and judge with the same functions,
// so a figure of this package is the command's figure. The command's
// extras (sharded workers, telemetry endpoints, history, objective files,
// datasets and multi-turn workloads, the HTML report) are not part of
// this API.
//
// The API is v0: it may change in any release until servebench reaches
// v1. The packages under internal/ are not part of it.
package servebench
