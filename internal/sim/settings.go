package sim

import (
	"go.yaml.in/yaml/v3"
)

// Settings is the configuration as flat "section.field" keys and their
// YAML values ("device.mem_bandwidth_gbs": "3350"), leaving out seed and
// time_scale: what makes one simulated server differ from another, so
// that a run can record it and a comparison can name what differs. Two
// runs of one configuration with different seeds or time scales simulate
// the same server.
func (c Config) Settings() map[string]string {
	var n yaml.Node
	type plain Config // plain struct encoding
	out := map[string]string{}
	if err := n.Encode(plain(c)); err != nil {
		return out // a struct of plain fields always encodes
	}
	flatten(&n, "", out)
	delete(out, "seed")
	delete(out, "time_scale")
	return out
}

func flatten(n *yaml.Node, path string, out map[string]string) {
	if n.Kind == yaml.ScalarNode {
		out[path] = n.Value
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		flatten(n.Content[i+1], join(path, n.Content[i].Value), out)
	}
}
