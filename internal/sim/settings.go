package sim

// Settings is the configuration as flat "section.field" keys and their
// YAML values ("device.mem_bandwidth_gbs": "3350"), leaving out seed and
// time_scale: what makes one simulated server differ from another, so
// that a run can record it and a comparison can name what differs. Two
// runs of one configuration with different seeds or time scales simulate
// the same server.
func (c Config) Settings() map[string]string {
	out := map[string]string{}
	for _, kv := range flatYAML(c) {
		out[kv[0]] = kv[1]
	}
	delete(out, "seed")
	delete(out, "time_scale")
	return out
}
