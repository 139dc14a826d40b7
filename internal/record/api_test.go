package record

import "testing"

// TestChatAPI: the chat APIs send messages; the others a bare prompt.
func TestChatAPI(t *testing.T) {
	want := map[string]bool{APIOpenAIChat: true, APIOllamaChat: true, APIOpenAICompletions: false, APIOllamaGenerate: false,
		APILlamaCppCompletion: false, APITGIGenerate: false, APISGLangGenerate: false}
	if len(APIs()) != len(want) {
		t.Fatalf("APIs() = %v, want the %d of this test", APIs(), len(want))
	}
	for _, api := range APIs() {
		if got := ChatAPI(api); got != want[api] {
			t.Errorf("ChatAPI(%q) = %v, want %v", api, got, want[api])
		}
	}
}
