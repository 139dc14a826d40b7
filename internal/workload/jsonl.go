package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/servebench/servebench/internal/tokenize"
)

// maxLineBytes bounds one JSONL line: a 1M-token prompt is about 4 MB of
// text, and a bigger line is more likely a file in the wrong format.
const maxLineBytes = 64 << 20

// jsonlLine is one line of a JSONL prompt file. A line with
// "conversations" is a ShareGPT entry, so a ShareGPT dump written one
// conversation per line reads too.
// Fields are read raw, so that one of the wrong type is named with the
// value the file gives.
type jsonlLine struct {
	Prompt        json.RawMessage `json:"prompt"`
	Messages      json.RawMessage `json:"messages"`
	OutputTokens  json.RawMessage `json:"output_tokens"`
	Conversations json.RawMessage `json:"conversations"`
	ID            json.RawMessage `json:"id"`
}

// maxOutputTokens bounds a line's output_tokens: beyond it the number is
// a mistake, not a length any server generates.
const maxOutputTokens = 1 << 30

// ParseJSONL parses a JSON Lines prompt file, one request per line:
//
//	{"prompt": "Summarise ...", "output_tokens": 200}
//	{"messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}]}
//
// output_tokens is optional. Blank lines are skipped; other fields are
// ignored. name is the file's name for errors, which give its line.
func ParseJSONL(name string, data []byte) ([]Conversation, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	var out []Conversation
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(b) == 0 {
			continue
		}
		c, err := parseJSONLine(name, line, b)
		if err != nil {
			return nil, err
		}
		if len(c.Turns) > 0 {
			out = append(out, c)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w (lines are limited to %d MiB)", name, err, maxLineBytes>>20)
	}
	return out, nil
}

func parseJSONLine(name string, line int, b []byte) (Conversation, error) {
	var l jsonlLine
	if err := json.Unmarshal(b, &l); err != nil {
		return Conversation{}, lineError(name, line, "not a JSON object: %v", err)
	}
	if l.Conversations != nil {
		return shareGPTEntry(name, line, b)
	}
	c := Conversation{Line: line, ID: idString(l.ID)}
	var t Turn
	var err error
	switch prompt, msgs := given(l.Prompt), given(l.Messages); {
	case prompt && msgs:
		return c, lineError(name, line, `has both "prompt" and "messages"; give one`)
	case prompt:
		if json.Unmarshal(l.Prompt, &t.Prompt) != nil {
			return c, lineError(name, line, `"prompt" %s: want a string`, clipJSON(l.Prompt))
		}
		if t.Prompt == "" {
			return c, lineError(name, line, `"prompt" is empty`)
		}
	case msgs:
		var raw []json.RawMessage
		if json.Unmarshal(l.Messages, &raw) != nil {
			return c, lineError(name, line, `"messages" %s: want a list of {"role", "content"} objects`, clipJSON(l.Messages))
		}
		if t.Messages, err = chatMessages(raw); err != nil {
			return c, lineError(name, line, "%v", err)
		}
	default:
		return c, lineError(name, line, `has neither "prompt" nor "messages"`)
	}
	if given(l.OutputTokens) {
		if t.Output, err = outputTokens(l.OutputTokens); err != nil {
			return c, lineError(name, line, `"output_tokens" %s: %v`, clipJSON(l.OutputTokens), err)
		}
	}
	c.Turns = []Turn{t}
	return c, nil
}

// given reports whether a field is present and not null.
func given(raw json.RawMessage) bool { return raw != nil && string(raw) != "null" }

// outputTokens reads an output length: a whole number from 1 to
// maxOutputTokens.
func outputTokens(raw json.RawMessage) (int, error) {
	var v float64
	if json.Unmarshal(raw, &v) != nil {
		// a number past float64's range is still a number, and too big
		f, err := strconv.ParseFloat(string(raw), 64)
		if !errors.Is(err, strconv.ErrRange) {
			return 0, errors.New("want a number")
		}
		v = f
	}
	switch {
	case v < 1 || v != math.Trunc(v):
		return 0, errors.New("want a whole number of at least 1")
	case v > maxOutputTokens:
		return 0, fmt.Errorf("more than %d, the most a request may ask for", maxOutputTokens)
	}
	return int(v), nil
}

// clipJSON is a field's value as the file writes it, cut short for a
// message.
func clipJSON(raw json.RawMessage) string {
	const most = 40
	if r := []rune(string(raw)); len(r) > most {
		return string(r[:most]) + "…"
	}
	return string(raw)
}

// chatMessages checks a JSONL line's messages: roles system, user or
// assistant, string content, at least one user message.
func chatMessages(raw []json.RawMessage) ([]tokenize.Message, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf(`"messages" is empty`)
	}
	msgs := make([]tokenize.Message, 0, len(raw))
	users := 0
	for i, r := range raw {
		var m struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, fmt.Errorf("message %d: not a {role, content} object", i+1)
		}
		content, ok := m.Content.(string)
		switch {
		case m.Role != "system" && m.Role != "user" && m.Role != "assistant":
			return nil, fmt.Errorf("message %d: role %q: want system, user or assistant", i+1, m.Role)
		case !ok:
			return nil, fmt.Errorf("message %d: content must be a string", i+1)
		}
		if m.Role == "user" {
			users++
		}
		msgs = append(msgs, tokenize.Message{Role: m.Role, Content: content})
	}
	if users == 0 {
		return nil, fmt.Errorf(`"messages" has no user message`)
	}
	return msgs, nil
}

// idString renders an entry's id (a string or a number) for messages.
func idString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}
