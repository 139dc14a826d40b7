package backend

import (
	"io"
	"strings"
	"time"

	"github.com/servebench/servebench/internal/sse"
)

// wire is how a family of APIs streams its answer: which content types
// it answers with, how the end of a stream is marked (for messages), and
// the decoders of its events and of its chunks. Every API reads its
// stream with the one loop in read. models is where the family's servers
// list the models they serve (or, for one engine, the model it serves),
// and health where they say whether they are ready.
type wire struct {
	models  string
	health  string
	accepts func(mediaType string) bool
	marker  string
	events  func() sse.Decoder
	chunks  func() chunkDecoder
}

// chunkDecoder decodes one API family's events into a stream. It holds
// that family's scratch (the scanner, the encoding/json target), which a
// pooled stream reuses from request to request.
type chunkDecoder interface {
	// event handles one event; truncated says the stream ended inside
	// it. It reports whether the stream is over (its end marker, or a
	// failure recorded).
	event(s *stream, ev sse.Event, truncated bool) bool
	// reset drops what the last request left, keeping buffers.
	reset()
}

// sseWire is the OpenAI APIs' Server-Sent Events, ending in [DONE].
var sseWire = wire{
	models:  "/v1/models",
	accepts: func(mt string) bool { return mt == "text/event-stream" },
	marker:  "[DONE]",
	events:  func() sse.Decoder { return sse.NewEventStream(nil, nil) },
	chunks:  func() chunkDecoder { return new(openAIDecoder) },
}

// ndjsonWire is Ollama's newline-delimited JSON, ending in "done": true.
var ndjsonWire = wire{
	models:  "/api/tags",
	accepts: func(mt string) bool { return strings.Contains(mt, "ndjson") || strings.Contains(mt, "jsonl") },
	marker:  `"done": true`,
	events:  func() sse.Decoder { return sse.NewNDJSON(nil, nil) },
	chunks:  func() chunkDecoder { return new(ollamaDecoder) },
}

// read reads a stream until its end marker or a failure.
func (s *stream) read(body io.Reader) {
	d := s.dec
	d.Reset(body, time.Now)
	for d.Next() {
		s.events++
		if s.chunks.event(s, d.Event(), d.Truncated()) {
			return
		}
	}
	s.cut(d.Err(), d.Stray())
}

// join concatenates two texts into *buf, avoiding a copy when one is
// empty. What it returns stays valid until *buf is reset.
func join(buf *[]byte, a, b []byte) []byte {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0:
		return a
	}
	start := len(*buf)
	*buf = append(append(*buf, a...), b...)
	return (*buf)[start:]
}

func firstNonEmpty(a, b []byte) []byte {
	if len(a) > 0 {
		return a
	}
	return b
}
