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
// The servebench command is built on this API where its work is the
// API's: plan plans with Plan, report reads a run with OpenRuns, and
// compare reads each side with OpenRuns and compares them with Compare.
// Its run and decide, and a Run or Judge here, measure through one shared
// sequence and judge with the same functions, so a figure of this package
// is the command's figure. The command's extras (judging a recorded run,
// merging a sharded run's workers, telemetry endpoints, history,
// objective files, datasets and multi-turn workloads, the HTML report)
// are not part of this API. A Result keeps, for Compare, every request of
// a run up to 16,384 a load and an evenly spaced sample past that, as
// servebench compare does, so that its memory does not follow a long
// run's length.
//
// The API is v0: it may change in any release until servebench reaches
// v1. The packages under internal/ are not part of it.
package servebench
