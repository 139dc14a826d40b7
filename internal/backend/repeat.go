package backend

import (
	"bytes"
	"unicode/utf8"
)

// repeatChunk reads the chunks of a stream that differ from the one before
// only in their text, which is nearly all of them: a server writes the same
// id, model, index and nulls around each token. It keeps the bytes before
// and after the text of the last chunk the scanner read, and a chunk that
// starts and ends with exactly those bytes, with a plain string (no quote,
// backslash or control character, valid UTF-8) between them, reads as that
// chunk did with the new text. Only the string's body differs, so the
// scanner would read the same members and values (FuzzRepeatChunk holds it
// to that); what it spares is walking and validating the rest again.
type repeatChunk struct {
	pre, post []byte
	field     int // which text: 0 text, 1 content, 2 reasoning_content, 3 reasoning
	ok        bool
}

// learn keeps data as the pattern when the scanner's reading of it, out,
// holds one text, no finish reason and no usage, and that text is a string of data
// as it stands (unescaped); otherwise it forgets any pattern.
func (r *repeatChunk) learn(data []byte, out *openAIText) {
	r.ok = false
	if !out.choice || len(out.finish) > 0 || out.usage {
		return
	}
	field, t := -1, []byte(nil)
	for i, f := range [...][]byte{out.text, out.content, out.reasoningContent, out.reasoning} {
		if len(f) == 0 {
			continue
		}
		if field >= 0 {
			return
		}
		field, t = i, f
	}
	if field < 0 {
		return
	}
	// t is data[a:a+len(t)] unless it was unescaped into the scanner's own
	// buffer: the pointer comparison tells.
	a := cap(data) - cap(t)
	if a <= 0 || a+len(t) >= len(data) || &data[a] != &t[0] {
		return
	}
	r.pre = append(r.pre[:0], data[:a]...)
	r.post = append(r.post[:0], data[a+len(t):]...)
	r.field, r.ok = field, true
}

// match reads data into out when it is the pattern with another plain
// string as its text.
func (r *repeatChunk) match(data []byte, out *openAIText) bool {
	if !r.ok || len(data) < len(r.pre)+len(r.post) || !bytes.HasPrefix(data, r.pre) || !bytes.HasSuffix(data, r.post) {
		return false
	}
	mid := data[len(r.pre) : len(data)-len(r.post)]
	ascii := true
	for _, c := range mid {
		if strStop[c] {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(mid) {
		return false
	}
	*out = openAIText{choice: true}
	switch r.field {
	case 0:
		out.text = mid
	case 1:
		out.content = mid
	case 2:
		out.reasoningContent = mid
	default:
		out.reasoning = mid
	}
	return true
}
