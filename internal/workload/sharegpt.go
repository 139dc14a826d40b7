package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// shareGPTJSON is one conversation of a ShareGPT file.
type shareGPTJSON struct {
	ID            json.RawMessage `json:"id"`
	Conversations *[]struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
}

// ShareGPT speaker names, as the dumps in circulation spell them.
var shareGPTRoles = map[string]string{
	"human": "user", "user": "user",
	"gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant", "bard": "assistant", "bing": "assistant", "model": "assistant",
	"system": "system",
}

// ParseShareGPT parses a ShareGPT file: a JSON array of
//
//	{"id": "...", "conversations": [{"from": "human", "value": "..."}, {"from": "gpt", "value": "..."}]}
//
// Each human turn becomes a Turn whose Reply is the gpt turn that follows
// it. Scraped dumps are untidy, so empty human turns, answers with no
// question before them and empty conversations are skipped; a malformed
// entry or an unknown speaker is an error naming the file and line.
func ParseShareGPT(name string, data []byte) ([]Conversation, error) {
	lines := newLineCounter(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, lineError(name, lines.at(dec.InputOffset()), "a ShareGPT file is a JSON array of conversations")
	}
	var out []Conversation
	for dec.More() {
		start := lines.at(skipSpace(data, dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, lineError(name, lines.at(errOffset(err, dec.InputOffset())), "%v", err)
		}
		c, err := shareGPTEntry(name, start, raw)
		if err != nil {
			return nil, err
		}
		if len(c.Turns) > 0 {
			out = append(out, c)
		}
	}
	if _, err := dec.Token(); err == io.EOF {
		return nil, lineError(name, lines.at(dec.InputOffset()), "the file ends before the array is closed")
	} else if err != nil {
		return nil, lineError(name, lines.at(errOffset(err, dec.InputOffset())), "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, lineError(name, lines.at(dec.InputOffset()), "unexpected data after the array")
	}
	return out, nil
}

// shareGPTEntry parses one conversation that starts at line.
func shareGPTEntry(name string, line int, raw []byte) (Conversation, error) {
	var e shareGPTJSON
	if err := json.Unmarshal(raw, &e); err != nil {
		at := min(max(int(errOffset(err, 0)), 0), len(raw))
		return Conversation{}, lineError(name, line+bytes.Count(raw[:at], []byte{'\n'}), "not a ShareGPT conversation: %v", err)
	}
	c := Conversation{Line: line, ID: idString(e.ID)}
	if e.Conversations == nil {
		return c, lineError(name, line, `conversation %s has no "conversations" list`, c.ID)
	}
	var cur *Turn
	for i, m := range *e.Conversations {
		role, ok := shareGPTRoles[strings.ToLower(m.From)]
		if !ok {
			return c, lineError(name, line, "conversation %s, turn %d: unknown speaker %q (human, gpt, system)", c.ID, i+1, m.From)
		}
		switch {
		case role == "system" && i == 0:
			c.System = m.Value
		case role == "user" && strings.TrimSpace(m.Value) != "":
			c.Turns = append(c.Turns, Turn{Prompt: m.Value})
			cur = &c.Turns[len(c.Turns)-1]
		case role == "user":
			cur = nil // an empty question: its answer goes with it
		case role == "assistant" && cur != nil && cur.Reply == "":
			cur.Reply = m.Value
		}
	}
	return c, nil
}

// lineCounter turns byte offsets into line numbers, for offsets that only
// grow (a decoder's).
type lineCounter struct {
	data       []byte
	off, lines int
}

func newLineCounter(data []byte) *lineCounter { return &lineCounter{data: data, lines: 1} }

func (l *lineCounter) at(off int64) int {
	o := min(max(int(off), 0), len(l.data))
	if o < l.off {
		return 1 + bytes.Count(l.data[:o], []byte{'\n'})
	}
	l.lines += bytes.Count(l.data[l.off:o], []byte{'\n'})
	l.off = o
	return l.lines
}

// skipSpace returns the offset of the next value after off: past
// whitespace and the comma between array elements.
func skipSpace(data []byte, off int64) int64 {
	for int(off) < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// errOffset is where a decoding error happened, when it says.
func errOffset(err error, fallback int64) int64 {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Offset
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Offset
	}
	return fallback
}
