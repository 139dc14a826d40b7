package record

// ServerKey names one thing a server said about itself: a key of
// Target.Server (run.json target.server), written by the client's probe
// of the server (backend.Describe) or by the built-in simulator, and read
// by objectives, comparisons, the history and the reports.
type ServerKey string

// What a server says about itself, where it says it.
const (
	ServerRuntime        ServerKey = "runtime"              // vllm, sglang, tgi, llama.cpp, ollama, or what /v1/models says owns the model
	ServerRuntimeVersion ServerKey = "runtime_version"      // the server's version or build
	ServerModelID        ServerKey = "model_id"             // the served model's id
	ServerModelRoot      ServerKey = "model_root"           // what it was loaded from (vLLM root, llama.cpp model path)
	ServerModelRevision  ServerKey = "model_revision"       // a commit or digest, where the server says
	ServerQuantization   ServerKey = "quantization"         // quantization or dtype, where the server says
	ServerMaxModelLen    ServerKey = "max_model_len"        // context length in tokens
	ServerModelContext   ServerKey = "model_context_length" // the context the model was trained for (Ollama)
	ServerSlots          ServerKey = "total_slots"          // sequences served at once (llama.cpp /props)
	ServerEndpoints      ServerKey = "endpoints"            // which of the probed endpoints answered
	// ServerTimeScale is how many times faster than model time the
	// server runs (a simulated server's announcement).
	ServerTimeScale ServerKey = "time_scale"
	// ServerSampling prefixes the server's default sampling settings
	// ("sampling.temperature"); Sampling names one.
	ServerSampling ServerKey = "sampling."
)

// What the built-in simulator says about itself.
const (
	ServerEngine     ServerKey = "engine" // "servebench-sim"
	ServerDevice     ServerKey = "device" // the device it models
	ServerMaxNumSeqs ServerKey = "max_num_seqs"
	// ServerSimSettings is the simulator's whole configuration, a JSON
	// object of "section.field" keys: what makes one simulated server
	// another, setting by setting (compare). ServerSimChanges is the
	// same configuration as people read it, the settings that differ
	// from the defaults of the version that ran ("device.mem_bandwidth_gbs
	// 6700 (default 3350), ..."), so that a what-if run says what it
	// changed.
	ServerSimSettings ServerKey = "sim_settings"
	ServerSimChanges  ServerKey = "sim_changes"
)

// Sampling is the key of one of the server's default sampling settings:
// Sampling("temperature") is "sampling.temperature".
func Sampling(name string) ServerKey { return ServerSampling + ServerKey(name) }
