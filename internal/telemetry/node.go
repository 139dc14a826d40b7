package telemetry

import (
	"context"
	"fmt"

	dto "github.com/prometheus/client_model/go"
)

// Node exporter names (prometheus/node_exporter, meminfo and cpu
// collectors on Linux).
const (
	nodeMemTotal = "node_memory_MemTotal_bytes"
	nodeMemAvail = "node_memory_MemAvailable_bytes"
	nodeCPU      = "node_cpu_seconds_total"
)

// idleModes are the node_cpu_seconds_total modes in which a CPU is not
// busy: iowait is idle time spent waiting, as top counts it.
var idleModes = map[string]bool{"idle": true, "iowait": true}

// NodeSource scrapes a node exporter (--host-metrics-url): RAM, and the
// machine's CPU busy % and steal % between two reads. Instance "node:URL".
type NodeSource struct {
	s                            *scraper
	prevBusy, prevSteal, prevAll float64
	havePrev                     bool
}

// NewNodeSource scrapes ep, a node exporter's /metrics.
func NewNodeSource(ep Endpoint) *NodeSource { return &NodeSource{s: newScraper(ep)} }

// Name implements Source.
func (n *NodeSource) Name() string { return "node exporter at " + n.s.ep.URL }

// Read implements Source.
func (n *NodeSource) Read(ctx context.Context, now int64) ([]Sample, error) {
	fams, err := n.s.scrape(ctx)
	if err != nil {
		return nil, err
	}
	h := &Host{}
	h.RAMTotalBytes = pick(fams, refs(nodeMemTotal), false)
	h.RAMAvailBytes = pick(fams, refs(nodeMemAvail), false)
	if h.RAMTotalBytes != nil && h.RAMAvailBytes != nil {
		h.RAMUsedBytes = num(*h.RAMTotalBytes - *h.RAMAvailBytes)
	}
	h.CPUPercent, h.StealPercent = n.cpuPercent(fams)
	if *h == (Host{}) {
		return nil, fmt.Errorf("%s: no %s or %s series: not a node exporter", n.s.ep.URL, nodeMemTotal, nodeCPU)
	}
	return []Sample{{TNS: now, Source: KindHost, Instance: "node:" + n.s.ep.URL, Host: h}}, nil
}

// cpuPercent is the share of CPU time (all cores) spent busy since the
// previous read, and the part of it the hypervisor stole (mode "steal"),
// in %; nil on the first read and after the counters went backwards (a
// reboot). Steal is nil too where the exporter has no steal series.
func (n *NodeSource) cpuPercent(fams map[string]*dto.MetricFamily) (busyPct, stealPct *float64) {
	f := fams[nodeCPU]
	if f == nil {
		return nil, nil
	}
	busy, steal, all, hasSteal := 0.0, 0.0, 0.0, false
	for _, m := range f.GetMetric() {
		v, ok := value(m)
		if !ok {
			continue
		}
		all += v
		mode := label(m, "mode")
		if !idleModes[mode] {
			busy += v
		}
		if mode == "steal" {
			steal, hasSteal = steal+v, true
		}
	}
	dBusy, dSteal, dAll := busy-n.prevBusy, steal-n.prevSteal, all-n.prevAll
	had := n.havePrev
	n.prevBusy, n.prevSteal, n.prevAll, n.havePrev = busy, steal, all, true
	if !had || dAll <= 0 || dBusy < 0 {
		return nil, nil
	}
	if hasSteal && dSteal >= 0 {
		stealPct = num(100 * dSteal / dAll)
	}
	return num(100 * dBusy / dAll), stealPct
}
