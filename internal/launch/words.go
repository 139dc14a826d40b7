// Package launch starts the server a sweep measures: its command line
// split like a shell's words but never run through a shell, the sweep's
// values substituted into it as whole arguments, the process in a group
// of its own with its output in a log, and its stop checked: no process
// of the group left, its port free; on Linux, a watchdog stops the group
// should servebench die without stopping it.
package launch

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
)

// Split splits a command line into words as a POSIX shell would, without
// a shell: blanks separate words; 'single quotes' keep everything;
// "double quotes" keep everything but \" \\ \$ and \` escapes; a
// backslash outside quotes keeps the next character. What only a shell
// does (pipes, redirections, ; &, $VAR, `cmd`, globs taken literally) is
// refused unquoted, so that a command never silently means something
// other than what it says.
func Split(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '\'':
			j := indexRune(rs, i+1, '\'')
			if j < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			w.WriteString(string(rs[i+1 : j]))
			i, inWord = j, true
		case c == '"':
			j, err := doubleQuoted(rs, i+1, &w)
			if err != nil {
				return nil, err
			}
			i, inWord = j, true
		case c == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("a trailing \\ escapes nothing")
			}
			i++
			if rs[i] != '\n' { // a backslash-newline joins lines
				w.WriteRune(rs[i])
				inWord = true
			}
		case strings.ContainsRune(shellOnly, c):
			return nil, fmt.Errorf("%q is the shell's, and the command is not run through a shell: quote it to pass it as it is, or wrap the command in a script", c)
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("no command")
	}
	return words, nil
}

// shellOnly are the characters that mean something to a shell alone when
// unquoted: operators, expansions and substitutions.
const shellOnly = "|&;<>()$`"

func indexRune(rs []rune, from int, r rune) int {
	for j := from; j < len(rs); j++ {
		if rs[j] == r {
			return j
		}
	}
	return -1
}

// doubleQuoted copies the inside of a "..." that starts at from into w,
// and returns the index of its closing quote.
func doubleQuoted(rs []rune, from int, w *strings.Builder) (int, error) {
	for j := from; j < len(rs); j++ {
		switch rs[j] {
		case '"':
			return j, nil
		case '\\':
			if j+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[j+1]) {
				j++
				if rs[j] != '\n' {
					w.WriteRune(rs[j])
				}
				continue
			}
			w.WriteRune('\\')
		case '$', '`':
			return 0, fmt.Errorf("%q inside double quotes is a shell expansion, and the command is not run through a shell: use single quotes to pass it as it is", rs[j])
		default:
			w.WriteRune(rs[j])
		}
	}
	return 0, errors.New(`unterminated " quote`)
}

// placeholder is a {NAME} in a word: a name of letters, digits, _ and -,
// starting with a letter or _. Other braces ({"a": 1}) are text.
var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_-]*)\}`)

// Expand substitutes each {NAME} in s by vals[NAME]. The result is still
// one word, however many blanks or quotes the values hold: a value cannot
// add an argument, let alone a command. A name vals lacks is an error
// (a misspelt parameter), naming it.
func Expand(s string, vals map[string]string) (string, error) {
	var missing string
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := vals[name]
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", &UnknownError{Name: missing}
	}
	return out, nil
}

// ExpandAll expands every word (Expand), each staying one word.
func ExpandAll(words []string, vals map[string]string) ([]string, error) {
	out := make([]string, len(words))
	for i, w := range words {
		var err error
		if out[i], err = Expand(w, vals); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Uses reports whether s names {name}.
func Uses(s, name string) bool {
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		if m[1] == name {
			return true
		}
	}
	return false
}

// UnknownError is a {NAME} that no parameter defines.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("{%s} is no parameter: define it with --param %s=V1,V2 (or write {port} for the server's port)", e.Name, e.Name)
}

// Places reports whether any of words names {name}.
func Places(words []string, name string) bool {
	for _, w := range words {
		if Uses(w, name) {
			return true
		}
	}
	return false
}

// CheckConfigs expands words for every configuration, {port} standing in
// as 1, and returns the first error: a {NAME} no parameter defines shows
// before any server starts.
func CheckConfigs(words []string, configs []Config) error {
	for _, c := range configs {
		vals := maps.Clone(c.Values)
		if vals == nil {
			vals = map[string]string{}
		}
		vals[PortName] = "1"
		if _, err := ExpandAll(words, vals); err != nil {
			return err
		}
	}
	return nil
}

// Quote quotes the words that need it for a shell, so that a command
// printed can be pasted back.
func Quote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\|&;<>()$`*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
