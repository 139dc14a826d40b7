package tokenize

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSynth measures prompt synthesis under the local default
// tokenizer, calibration excluded (it happens once per run).
func BenchmarkSynth(b *testing.B) {
	for _, n := range []int{512, 32768} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			ctx := context.Background()
			s := NewSynth(newTiktoken(b, DefaultEncoding), 1)
			if _, err := s.Prompt(ctx, 1); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Prompt(ctx, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
