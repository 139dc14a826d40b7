package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/servebench/servebench/internal/tokenize"
)

// maxLineBytes bounds one JSONL line: a 1M-token prompt is about 4 MB of
// text, and a bigger line is more likely a file in the wrong format.
const maxLineBytes = 64 << 20

// jsonlLine is one line of a JSONL prompt file. A line with
// "conversations" is a ShareGPT entry, so a ShareGPT dump written one
// conversation per line reads too.
type jsonlLine struct {
	Prompt        *string           `json:"prompt"`
	Messages      []json.RawMessage `json:"messages"`
	OutputTokens  *float64          `json:"output_tokens"`
	Conversations json.RawMessage   `json:"conversations"`
	ID            json.RawMessage   `json:"id"`
}

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
	switch {
	case l.Prompt != nil && l.Messages != nil:
		return c, lineError(name, line, `has both "prompt" and "messages"; give one`)
	case l.Prompt != nil:
		if *l.Prompt == "" {
			return c, lineError(name, line, `"prompt" is empty`)
		}
		t.Prompt = *l.Prompt
	case l.Messages != nil:
		msgs, err := chatMessages(l.Messages)
		if err != nil {
			return c, lineError(name, line, "%v", err)
		}
		t.Messages = msgs
	default:
		return c, lineError(name, line, `has neither "prompt" nor "messages"`)
	}
	if o := l.OutputTokens; o != nil {
		if *o < 1 || *o != float64(int(*o)) || *o > 1<<30 {
			return c, lineError(name, line, `"output_tokens" %v: want a whole number of at least 1`, *o)
		}
		t.Output = int(*o)
	}
	c.Turns = []Turn{t}
	return c, nil
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
