package slo

import (
	"embed"
	"fmt"
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
