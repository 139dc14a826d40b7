package main

import (
	"fmt"
	"time"
)

// rateChunks is the length of each answer in the open-loop check: short,
// so that the requests in flight stay few and the pace is the client's.
const rateChunks = 10

// rate: constant arrivals at c.rate for c.seconds, servebench's open loop
// against vegeta's constant pacer on the same server. The achieved rate is
// (sends − 1) over the first to last send; lag is each send behind its
// scheduled instant.
func rate(c config) error {
	fmt.Printf("rate: constant %d req/s for %ds, %d-chunk answers\n", c.rate, c.seconds, rateChunks)
	fmt.Printf("%-6s %-10s %7s %10s %8s %9s %9s %9s %9s\n", "repeat", "client", "sent", "req/s", "of target", "lag p50", "lag p99", "lag max", "disp p50/p99")
	for i := range c.repeats {
		srv, err := startServer("-chunks", itoa(rateChunks))
		if err != nil {
			return err
		}
		var vr paceResult
		var sd runDir
		veg := func() error {
			_, err := self(&vr, "vegeta", "-url", srv.URL, "-rate", itoa(c.rate), "-duration", (time.Duration(c.seconds) * time.Second).String())
			return err
		}
		sb := func() error {
			_, sd, err = sbRun(c, srv.URL, true, "--rate", itoa(c.rate), "--arrival", "constant", "--duration", itoa(c.seconds)+"s",
				"--prompt-tokens", "128", "--output-tokens", itoa(rateChunks))
			return err
		}
		err = inOrder(i, veg, sb)
		srv.stop()
		if err != nil {
			return err
		}
		target := float64(c.rate)
		fmt.Printf("%-6d %-10s %7d %10.2f %8.4fx %8.3fms %8.3fms %8.3fms %9s\n", i+1, "vegeta", vr.Sent, vr.Rate, vr.Rate/target,
			q(vr.LagMS, 0.5), q(vr.LagMS, 0.99), q(vr.LagMS, 1), "-")
		sends, lag := sbPace(sd)
		r := achievedRate(sends)
		fmt.Printf("%-6d %-10s %7d %10.2f %8.4fx %8.3fms %8.3fms %8.3fms %4.2f/%.2fms\n", i+1, "servebench", len(sends), r, r/target,
			q(lag, 0.5), q(lag, 0.99), q(lag, 1), sd.Client.LagP50MS, sd.Client.LagP99MS)
	}
	fmt.Println("lag: send minus scheduled instant (vegeta: a hit's Timestamp; servebench: sent_ns − scheduled_ns); disp: servebench's dispatcher lag p50/p99 (run.json)")
	fmt.Println()
	return nil
}

// sbPace is a run's send instants and each send's lag behind its schedule.
func sbPace(d runDir) ([]time.Time, []float64) {
	var sends []time.Time
	var lag []float64
	for _, r := range d.Records {
		sends = append(sends, d.Epoch.Add(time.Duration(r.SentNS)))
		lag = append(lag, float64(r.SentNS-r.ScheduledNS)/1e6)
	}
	return sends, lag
}
