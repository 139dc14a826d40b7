package record

// The APIs servebench speaks, as --api, run.json and every record name
// them.
const (
	APIOpenAIChat        = "openai-chat"
	APIOpenAICompletions = "openai-completions"
	APIOllamaChat        = "ollama-chat"
	APIOllamaGenerate    = "ollama-generate"
)

// APIs lists the API names in the order usage text shows them.
func APIs() []string {
	return []string{APIOpenAIChat, APIOpenAICompletions, APIOllamaChat, APIOllamaGenerate}
}

// ChatAPI reports whether an API sends a conversation of messages, which
// the server's chat template wraps in tokens of its own, rather than a
// bare prompt: a prompt's length per the server then differs from the
// length of its text.
func ChatAPI(api string) bool { return api == APIOpenAIChat || api == APIOllamaChat }
