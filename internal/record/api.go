package record

// The APIs servebench speaks, as --api, run.json and every record name
// them.
const (
	APIOpenAIChat        = "openai-chat"
	APIOpenAICompletions = "openai-completions"
	APIOllamaChat        = "ollama-chat"
	APIOllamaGenerate    = "ollama-generate"
	// The engines' native streaming APIs, which report the server's own
	// timings and token counts.
	APILlamaCppCompletion = "llamacpp-completion" // llama.cpp server POST /completion
	APITGIGenerate        = "tgi-generate"        // TGI POST /generate_stream
	APISGLangGenerate     = "sglang-generate"     // SGLang POST /generate
)

// APIs lists the API names in the order usage text shows them.
func APIs() []string {
	return []string{APIOpenAIChat, APIOpenAICompletions, APIOllamaChat, APIOllamaGenerate,
		APILlamaCppCompletion, APITGIGenerate, APISGLangGenerate}
}

// ChatAPI reports whether an API sends a conversation of messages, which
// the server's chat template wraps in tokens of its own, rather than a
// bare prompt: a prompt's length per the server then differs from the
// length of its text.
func ChatAPI(api string) bool { return api == APIOpenAIChat || api == APIOllamaChat }
