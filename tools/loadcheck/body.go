package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/servebench/servebench/internal/tokenize"
)

// plainBody writes, for the plain client, a chat request whose prompt is
// as long as servebench's (tokens under cl100k_base, servebench's local
// tokenizer): both clients then write requests of the same size and the
// server reads the same bytes from each, so the comparison is of reading
// streams, not of request sizes. The plain client sends this one body
// every time; building it is not part of its command.
func plainBody(dir string, promptTokens, maxTokens int) (string, error) {
	tk, err := tokenize.NewTiktoken("cl100k_base")
	if err != nil {
		return "", err
	}
	p, err := tokenize.NewSynth(tk, 1).Chat(context.Background(), promptTokens)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]any{"model": "m", "stream": true, "max_tokens": maxTokens,
		"messages": []map[string]string{{"role": "user", "content": p.Text}}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "body.json")
	return path, os.WriteFile(path, b, 0o644)
}
