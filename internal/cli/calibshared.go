package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/servebench/servebench/internal/calib"
	"github.com/servebench/servebench/internal/plan"
)

// calibShape names the model and device a calibration is read against
// (--config or --gguf with one --gpu): the shared roofline model's terms.
type calibShape struct {
	config, gguf, gpu, devices, engine, weights, kv string
	tp                                              int
}

func (s *calibShape) bind(fs *flag.FlagSet) {
	fs.StringVar(&s.config, "config", "", "Hugging Face config.json (or its `directory`): also read the fit as the shared model's efficiencies and overheads (with --gpu)")
	fs.StringVar(&s.gguf, "gguf", "", "GGUF model `file`, instead of --config")
	fs.StringVar(&s.gpu, "gpu", "", "the device `name` the run measured (with --config or --gguf)")
	fs.StringVar(&s.devices, "devices", "", "YAML `file` of extra devices (catalog format)")
	fs.StringVar(&s.engine, "engine", plan.EngineVLLM, "engine: "+strings.Join(plan.Engines(), ", "))
	fs.StringVar(&s.weights, "weights", "", "weight `format` (default: the checkpoint's)")
	fs.StringVar(&s.kv, "kv-dtype", "auto", "KV-cache `type`")
	fs.IntVar(&s.tp, "tp", 1, "tensor-parallel degree (vLLM); GPUs the layers are split over (llama.cpp, Ollama)")
}

// fitShared fits the shared roofline model of the model and device named
// to the run, into fit.Shared; nothing when none is named.
func (s *calibShape) fitShared(fit *calib.Fit, o calib.Options) error {
	if s.config == "" && s.gguf == "" {
		if s.gpu != "" {
			return usagef("servebench plan --calibrate runs/a --config internal/plan/testdata/models/Llama-3.1-8B --gpu H100-SXM", "--gpu needs --config or --gguf")
		}
		return nil
	}
	if s.gpu == "" || strings.Contains(s.gpu, ",") {
		return usagef("servebench plan --calibrate runs/a --config internal/plan/testdata/models/Llama-3.1-8B --gpu H100-SXM", "--config with --calibrate needs exactly one --gpu: the device the run measured")
	}
	pf := planFlags{config: s.config, gguf: s.gguf, devices: s.devices}
	shape, err := pf.loadModel()
	if err != nil {
		return err
	}
	devs, err := pf.loadDevices()
	if err != nil {
		return err
	}
	if devs, err = selectDevices(devs, s.gpu); err != nil {
		return err
	}
	opts := plan.Options{Engine: s.engine, Weights: s.weights, KVType: s.kv, GPUs: s.tp, Eff: plan.DefaultEfficiency()}
	peak, err := plan.PeakModel(shape, opts, devs[0])
	if err != nil {
		return planError(err)
	}
	if fit.Shared, err = fit.FitShared(peak, o); err != nil {
		return err
	}
	fit.Shared.Model, fit.Shared.Device = shape.Name, devs[0].Name
	return nil
}

func writeShared(w io.Writer, sh *calib.Shared) {
	if sh == nil {
		return
	}
	fmt.Fprintf(w, "\nShared roofline model of %s on %s, fitted (95%% bootstrap intervals); predictions run on it:\n", sh.Model, sh.Device)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	writeParams(tw, sh.Params)
	tw.Flush()
	fmt.Fprintf(w, "  gap RMS %.3g ms\n", sh.RMSMS)
}
