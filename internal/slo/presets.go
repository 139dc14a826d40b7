package slo

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// presetFS holds the preset objectives; each file's comments say where its
// numbers come from, and `servebench objective show NAME` prints it as is.
//
//go:embed presets/*.yaml
var presetFS embed.FS

// PresetNames lists the presets in a fixed, meaningful order (the issue's
// order: interactive first, offline last).
var PresetNames = []string{"chat", "coding", "documents", "api", "batch", "local"}

// PresetYAML returns a preset's file.
func PresetYAML(name string) ([]byte, error) {
	if !slices.Contains(PresetNames, name) {
		return nil, fmt.Errorf("no preset %q (presets: %s)", name, strings.Join(PresetNames, ", "))
	}
	return presetFS.ReadFile(path.Join("presets", name+".yaml"))
}

// Preset returns a parsed preset.
func Preset(name string) (*Objective, error) {
	b, err := PresetYAML(name)
	if err != nil {
		return nil, err
	}
	o, err := ParseObjective(b)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", name, err)
	}
	return o, nil
}

// Presets returns every preset, parsed, in PresetNames' order.
func Presets() ([]*Objective, error) {
	var out []*Objective
	for _, name := range PresetNames {
		o, err := Preset(name)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// ErrNoObjective is an objective named by neither a file nor a preset.
var ErrNoObjective = errors.New("no such file or preset")

// Open reads an objective: the file at spec when one exists, else the
// preset of that name (a spec with a '/' or '.' is always a file). A
// spec that is neither is ErrNoObjective; a file that cannot be read, the
// read's *fs.PathError; a file's objective without a name is named after
// the file.
func Open(spec string) (*Objective, error) {
	b, err := os.ReadFile(spec)
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(spec, "/.") {
		if !slices.Contains(PresetNames, spec) {
			return nil, ErrNoObjective
		}
		return Preset(spec)
	}
	if err != nil {
		return nil, err
	}
	o, err := ParseObjective(b)
	if err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = strings.TrimSuffix(spec[strings.LastIndex(spec, "/")+1:], ".yaml")
	}
	return o, nil
}
