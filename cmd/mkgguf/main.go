// Command mkgguf writes a small random-weight llama-architecture model in
// GGUF, so that servebench can test a real inference engine (Ollama,
// llama.cpp) without downloading a model. The weights are random: the model
// emits random words, never ends its answer on its own, and is only good for
// measuring speed.
//
//	go run ./cmd/mkgguf -o model.gguf
//	go run ./cmd/mkgguf -o tiny.gguf -dim 128 -layers 2 -ffn 384 -heads 4 -kv-heads 2
//
// Exit status: 0 written, 1 failure, 2 usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/servebench/servebench/internal/gguf"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	c := gguf.DefaultLlama
	fs := flag.NewFlagSet("mkgguf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output `file` (required)")
	fs.StringVar(&c.Name, "name", c.Name, "general.name written in the file")
	fs.IntVar(&c.Dim, "dim", c.Dim, "embedding width")
	fs.IntVar(&c.Layers, "layers", c.Layers, "number of transformer blocks")
	fs.IntVar(&c.FFN, "ffn", c.FFN, "feed-forward width")
	fs.IntVar(&c.Heads, "heads", c.Heads, "attention heads")
	fs.IntVar(&c.KVHeads, "kv-heads", c.KVHeads, "key/value heads (grouped-query attention)")
	fs.IntVar(&c.Context, "ctx", c.Context, "training context length written in the file")
	fs.IntVar(&c.VocabWords, "vocab-words", c.VocabWords,
		fmt.Sprintf("word pieces in the vocabulary, 0..%d", gguf.MaxVocabWords))
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed; the same flags write the same bytes")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: mkgguf -o FILE [flags]\n\n"+
			"Writes a random-weight llama model in GGUF (Q8_0 matrices, F32 norms).\n\n"+
			"Examples:\n  mkgguf -o model.gguf\n  mkgguf -o tiny.gguf -dim 128 -layers 2 -ffn 384 -heads 4 -kv-heads 2\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "Error: -o FILE is required and no arguments are taken")
		fmt.Fprintln(stderr, "Try: mkgguf -o model.gguf")
		return 2
	}
	f, err := gguf.NewLlama(c)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\nTry: mkgguf -h for the valid sizes\n", err)
		return 2
	}
	n, err := f.WriteFile(*out)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %d bytes, %d tensors, %.1fM parameters, vocabulary %d\n",
		*out, n, len(f.Tensors), float64(f.Parameters())/1e6, vocabSize(f))
	return 0
}

func vocabSize(f *gguf.File) int {
	for _, kv := range f.KV {
		if kv.Key == "tokenizer.ggml.tokens" {
			return len(kv.Value.([]string))
		}
	}
	return 0
}
