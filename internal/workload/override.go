package workload

import "slices"

// specFlags are run's flags for a Spec's fields other than the two
// lengths (docs/WORKLOADS.md), each with the field it sets: the one table
// that says which flag overrides which key of an objective's workload.
var specFlags = []struct {
	flag string
	set  func(dst *Spec, src Spec)
}{
	{"dataset", func(d *Spec, s Spec) { d.Dataset = s.Dataset }},
	{"dataset-format", func(d *Spec, s Spec) { d.Format = s.Format }},
	{"dataset-order", func(d *Spec, s Spec) { d.Order = s.Order }},
	{"max-prompt-tokens", func(d *Spec, s Spec) { d.MaxPromptTokens = s.MaxPromptTokens }},
	{"shared-prefix", func(d *Spec, s Spec) { d.SharedPrefix = s.SharedPrefix }},
	{"prefix-groups", func(d *Spec, s Spec) { d.PrefixGroups = s.PrefixGroups }},
	{"multi-turn", func(d *Spec, s Spec) { d.MultiTurn = s.MultiTurn }},
	{"think-time", func(d *Spec, s Spec) { d.ThinkTime = s.ThinkTime }},
	{"context-tokens", func(d *Spec, s Spec) { d.ContextTokens = s.ContextTokens }},
	{"long-context", func(d *Spec, s Spec) { d.LongContext = s.LongContext }},
}

// Override returns s with the fields of over whose flags are named in
// given put in their place; other names (the length flags among them,
// which make a matrix) are ignored.
func (s Spec) Override(over Spec, given []string) Spec {
	for _, f := range specFlags {
		if slices.Contains(given, f.flag) {
			f.set(&s, over)
		}
	}
	return s
}
