package launch

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// PortName is the placeholder of the port a configuration's server
// listens on, chosen by the sweep.
const PortName = "port"

// Param is one --param NAME=V1,V2,...: the values a sweep tries.
type Param struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

var paramName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// ParseParam parses NAME=V1,V2,... Values are taken as written (blanks
// around commas trimmed); a value may hold anything but a comma.
func ParseParam(s string) (Param, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || !paramName.MatchString(name) {
		return Param{}, errors.New("want NAME=V1,V2,..., such as seqs=8,16,32 (a name of letters, digits, _ and -)")
	}
	if name == PortName {
		return Param{}, errors.New("{port} is the port the sweep picks for each server: choose another name")
	}
	p := Param{Name: name}
	for _, v := range strings.Split(list, ",") {
		if v = strings.TrimSpace(v); v == "" {
			return Param{}, fmt.Errorf("--param %s: an empty value", name)
		}
		p.Values = append(p.Values, v)
	}
	return p, nil
}

// Config is one combination of the parameters' values.
type Config struct {
	// Names are the parameters in the order given; Values by name.
	Names  []string
	Values map[string]string
}

// Name is how the configuration is named in tables and as its run
// directory: name-value pairs joined by "_", each value's characters
// outside [A-Za-z0-9.-] as "-" ("seqs-8_kv-fp8").
func (c Config) Name() string {
	if len(c.Names) == 0 {
		return "default"
	}
	parts := make([]string, len(c.Names))
	for i, n := range c.Names {
		parts[i] = n + "-" + safeName(c.Values[n])
	}
	return strings.Join(parts, "_")
}

func safeName(v string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, v)
}

// String is the configuration as the user wrote it: "seqs=8 kv=fp8".
func (c Config) String() string {
	parts := make([]string, len(c.Names))
	for i, n := range c.Names {
		parts[i] = n + "=" + c.Values[n]
	}
	return strings.Join(parts, " ")
}

// Configs is the cross product of the parameters, the first one varying
// slowest, as nested loops in the order given; one configuration with no
// values when there are no parameters. A name given twice is an error.
func Configs(params []Param) ([]Config, error) {
	out := []Config{{Values: map[string]string{}}}
	seen := map[string]bool{}
	for _, p := range params {
		if seen[p.Name] {
			return nil, fmt.Errorf("--param %s is given twice: list every value in one --param %s=V1,V2", p.Name, p.Name)
		}
		seen[p.Name] = true
		var next []Config
		for _, c := range out {
			for _, v := range p.Values {
				vals := map[string]string{p.Name: v}
				for k, x := range c.Values {
					vals[k] = x
				}
				next = append(next, Config{Names: append(append([]string(nil), c.Names...), p.Name), Values: vals})
			}
		}
		out = next
	}
	return out, nil
}

// ExpandList expands a comma-separated list of numbers in which each
// item may name parameters and multiply, divide, add or subtract them:
// "1,{seqs},{seqs}*2" with seqs=8 is "1,8,16". Products bind before sums;
// the result is written back as a list of plain numbers.
func ExpandList(s string, vals map[string]string) (string, error) {
	x, err := Expand(s, vals)
	if err != nil {
		return "", err
	}
	items := strings.Split(x, ",")
	for i, it := range items {
		v, err := Eval(it)
		if err != nil {
			return "", fmt.Errorf("%q: %w", strings.TrimSpace(it), err)
		}
		items[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(items, ","), nil
}

// Eval evaluates a sum of products of numbers: "8*2", "16/4+1".
func Eval(s string) (float64, error) {
	total := 0.0
	for _, term := range splitKeep(strings.TrimSpace(s), "+-") {
		sign := 1.0
		switch {
		case strings.HasPrefix(term, "+"):
			term = term[1:]
		case strings.HasPrefix(term, "-"):
			sign, term = -1, term[1:]
		}
		v, err := product(term)
		if err != nil {
			return 0, err
		}
		total += sign * v
	}
	return total, nil
}

func product(term string) (float64, error) {
	v := 1.0
	for i, f := range splitKeep(term, "*/") {
		op := byte('*')
		if i > 0 {
			op, f = f[0], f[1:]
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return 0, errors.New("want a number, or numbers and {NAME}s joined by * / + -")
		}
		if op == '/' {
			if x == 0 {
				return 0, errors.New("division by zero")
			}
			x = 1 / x
		}
		v *= x
	}
	return v, nil
}

// splitKeep splits s before each of ops (the first part keeps none):
// "a+b-c" → "a", "+b", "-c". An operator right after another one, or at
// the start, belongs to the number (a sign).
func splitKeep(s, ops string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if strings.IndexByte(ops, s[i]) >= 0 && !strings.ContainsRune("+-*/eE", rune(s[i-1])) {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

// ExpandNumber is one number written with parameters, as an item of
// ExpandList: "{tp}*2" with tp=4 is 8.
func ExpandNumber(s string, vals map[string]string) (float64, error) {
	x, err := ExpandList(s, vals)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(x, 64)
}
