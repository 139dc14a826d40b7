// Command enginecheck checks servebench runs against a real engine's own
// timings (see tools/internal/enginecheck for what is checked and why). It is the
// last step of scripts/engine-e2e.sh.
//
//	enginecheck -requests 8 runs/openai runs/native
//
// With -kv-log and -kv-plan it also checks the planner's KV-cache size (the
// JSON of servebench plan --json) against the last `llama_kv_cache: size`
// line of the engine's log; run directories are then optional:
//
//	enginecheck -kv-log serve.log -kv-plan plan.json
//
// With -calib it checks servebench calibrate's predictions for a held-out run
// (the JSON of servebench calibrate DIR --against DIR2 --json)
// against that run's measurements, to the calibration goal (10% for
// tokens/s, 25% for TTFT p50). -calib-tps-goal and -calib-ttft-goal widen
// the bound it fails beyond; each figure is still reported against the
// goal itself:
//
//	enginecheck -calib calib.json
//
// With -host-plan (a servebench plan --json of the engine's model and
// slots) it also checks each run's host telemetry: the engine's process
// tree found through its port, with its runner, read with non-zero memory
// and CPU under load, its resident memory consistent with the plan:
//
//	enginecheck -host-plan plan.json runs/openai runs/native
//
// With -sweep (a servebench sweep directory over the engine's slots,
// -sweep-slots naming the parameter, at 1 and 2 users) it checks that every
// configuration started, with its start-up and first token recorded, and
// that with one slot the second user queues (at 2 users a request waits
// about a prompt and an answer longer before the server begins on its
// prompt: its TTFT less the server's prompt evaluation time) while with
// more it waits at most for the other's prompt:
//
//	enginecheck -sweep runs/sweep -sweep-slots np
//
// Exit status: 0 every check passed, 1 a check failed or a run could not be
// read, 2 usage. It never passes by skipping: a run directory without
// records, or no load point it could compare, is a failure.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/servebench/servebench/internal/record"
	"github.com/servebench/servebench/internal/rundir"
	"github.com/servebench/servebench/internal/sweep"
	"github.com/servebench/servebench/tools/internal/enginecheck"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	var o enginecheck.Options
	var kvLog, kvPlan, calib, hostPlan, sweepDir, sweepSlots string
	bound := enginecheck.DefaultCalibGoal // widened by the -calib-*-goal flags
	fs := flag.NewFlagSet("enginecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&o.DecodeTolerance, "decode-tolerance", enginecheck.DefaultDecodeTolerance,
		"largest relative difference of client and server median decode speed at concurrency 1")
	fs.IntVar(&o.WantRequests, "requests", 0, "measured requests each load point must have (0: not checked)")
	fs.StringVar(&kvLog, "kv-log", "", "engine log `file` whose last llama_kv_cache size line is checked (with -kv-plan)")
	fs.StringVar(&kvPlan, "kv-plan", "", "`file` of servebench plan --json output whose KV cache must equal the log's")
	fs.StringVar(&calib, "calib", "", "`file` of servebench calibrate --against --json output whose predictions must meet the goal")
	fs.Float64Var(&bound.Throughput, "calib-tps-goal", bound.Throughput, fmt.Sprintf("largest |predicted/measured - 1| of output and decode tokens/s before the check fails (the goal, %g, is reported either way)", bound.Throughput))
	fs.Float64Var(&bound.TTFT, "calib-ttft-goal", bound.TTFT, fmt.Sprintf("largest |predicted/measured - 1| of TTFT p50 before the check fails (the goal, %g, is reported either way)", bound.TTFT))
	fs.StringVar(&hostPlan, "host-plan", "", "`file` of servebench plan --json output the runs' engine memory (host telemetry) is checked against")
	fs.StringVar(&sweepDir, "sweep", "", "servebench sweep `directory` over the engine's slots at 1 and 2 users whose queueing is checked")
	fs.StringVar(&sweepSlots, "sweep-slots", "np", "the -sweep's parameter that sets the slots")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: enginecheck [flags] RUN_DIR...\n"+
			"       enginecheck -kv-log FILE -kv-plan FILE [flags] [RUN_DIR...]\n"+
			"       enginecheck -calib FILE [flags] [RUN_DIR...]\n\n"+
			"Checks each run's %s against the engine's own timings, and the\n"+
			"planner's KV cache against the engine log's llama_kv_cache size line.\n\n"+
			"Examples:\n  enginecheck -requests 8 runs/openai runs/native\n"+
			"  enginecheck -kv-log serve.log -kv-plan plan.json\n"+
			"  enginecheck -calib calib.json\n"+
			"  enginecheck -host-plan plan.json runs/native\n\nFlags:\n", rundir.RecordsFile)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	kv := kvLog != "" || kvPlan != ""
	if (fs.NArg() == 0 && !kv && calib == "" && sweepDir == "") || o.DecodeTolerance <= 0 || o.WantRequests < 0 || !(bound.Throughput > 0 && bound.TTFT > 0) {
		fmt.Fprintln(stderr, "Error: give one or more run directories; -decode-tolerance and the -calib goals must be positive, -requests not negative")
		fmt.Fprintln(stderr, "Try: enginecheck runs/native")
		return 2
	}
	if hostPlan != "" && fs.NArg() == 0 {
		fmt.Fprintln(stderr, "Error: -host-plan checks run directories: give one or more")
		fmt.Fprintln(stderr, "Try: enginecheck -host-plan plan.json runs/native")
		return 2
	}
	if kv && (kvLog == "" || kvPlan == "") {
		fmt.Fprintln(stderr, "Error: -kv-log and -kv-plan go together")
		fmt.Fprintln(stderr, "Try: enginecheck -kv-log serve.log -kv-plan plan.json")
		return 2
	}
	code := 0
	if kv {
		code = checkKV(kvLog, kvPlan, stdout, stderr)
	}
	if calib != "" {
		code = max(code, checkCalib(calib, bound, stdout, stderr))
	}
	if sweepDir != "" {
		code = max(code, checkSweep(sweepDir, sweepSlots, stdout, stderr))
	}
	if fs.NArg() == 0 {
		return code
	}
	if hostPlan != "" {
		code = max(code, checkHost(hostPlan, fs.Args(), stdout, stderr))
	}
	res, err := enginecheck.Check(fs.Args(), o)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\nTry: check that servebench run --out wrote that directory\n", err)
		return 1
	}
	if err := enginecheck.Render(stdout, res); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	if !res.OK() {
		return 1
	}
	return code
}

// checkKV compares the plan's KV cache with the engine log's.
func checkKV(logPath, planPath string, stdout, stderr io.Writer) int {
	c, err := kvCheck(logPath, planPath)
	if err != nil {
		fmt.Fprintf(stderr, "Error: kv cache: %v\nTry: servebench plan --gguf MODEL --engine ollama "+
			"--parallel N --context N --gpu NAME --json > %s\n", err, planPath)
		return 1
	}
	if err := enginecheck.RenderKV(stdout, c); err != nil || !c.OK() {
		return 1
	}
	return 0
}

func kvCheck(logPath, planPath string) (*enginecheck.KVCheck, error) {
	data, err := os.ReadFile(planPath)
	if err != nil {
		return nil, err
	}
	kv, err := enginecheck.ReadPlanKV(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", planPath, err)
	}
	f, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := enginecheck.LastKVCache(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", logPath, err)
	}
	return enginecheck.CheckKVCache(l, kv), nil
}

// checkCalib holds servebench calibrate's predictions to a held-out run: it
// reports each against the goal and fails on one beyond bound.
func checkCalib(path string, bound enginecheck.CalibGoal, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(path)
	var rows []enginecheck.CalibRow
	if err == nil {
		rows, err = enginecheck.CheckCalibration(data, bound)
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: calibration: %s: %v\nTry: servebench calibrate RUN --against HELD_OUT --json > %s\n", path, err, path)
		return 1
	}
	if err := enginecheck.RenderCalib(stdout, rows); err != nil {
		return 1
	}
	for _, r := range rows {
		if !r.OK() {
			return 1
		}
	}
	return 0
}

// checkSweep checks a slot sweep's start-ups and queueing.
func checkSweep(dir, slots string, stdout, stderr io.Writer) int {
	f, err := sweep.Read(dir)
	if err != nil {
		fmt.Fprintf(stderr, "Error: -sweep: %v\nTry: servebench sweep ... --param np=1,2 --concurrency 1,2 --out %s\n", err, dir)
		return 1
	}
	code := 0
	read := func(dir string, each func(*record.Record)) error {
		_, err := rundir.Records(dir, func(w string) { fmt.Fprintf(stderr, "warning: %s\n", w) }, each)
		return err
	}
	for _, r := range enginecheck.CheckSweep(f, slots, read) {
		verdict := "ok"
		if r.Problem != "" {
			verdict, code = "FAIL: "+r.Problem, 1
		}
		fmt.Fprintf(stdout, "sweep %s (%d slots): ready %.2f s, first token %.2f s, waited at 2 users, beyond one prompt, %.2f of an answer longer than at 1: %s\n",
			r.Config, r.Slots, r.ReadyS, r.FirstTokenS, r.Queued, verdict)
	}
	return code
}

// checkHost checks each run's host telemetry against the plan's memory.
func checkHost(planPath string, dirs []string, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(planPath)
	var mem enginecheck.PlanMemory
	if err == nil {
		mem, err = enginecheck.ReadPlanMemory(data)
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: -host-plan %s: %v\nTry: servebench plan --gguf MODEL --engine ollama --gpu NAME --json > %s\n", planPath, err, planPath)
		return 1
	}
	var checks []*enginecheck.HostCheck
	for _, d := range dirs {
		c, err := enginecheck.CheckHost(d, mem)
		if err != nil {
			fmt.Fprintf(stderr, "Error: host telemetry: %v\nTry: run servebench without --no-telemetry\n", err)
			return 1
		}
		checks = append(checks, c)
	}
	code := 0
	for _, c := range checks {
		if !c.OK() {
			code = 1
		}
	}
	if err := enginecheck.RenderHost(stdout, checks); err != nil {
		return 1
	}
	return code
}
