package main

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// paceResult is an open-loop client's pace: requests sent, their achieved
// rate (first to last send) and each send's lag behind its schedule (ms).
type paceResult struct {
	Sent   int       `json:"sent"`
	Failed int       `json:"failed"`
	Rate   float64   `json:"rate"`
	LagMS  []float64 `json:"lag_ms"`
}

// vegetaMain runs vegeta's attacker with its constant pacer and reports
// when each hit began against when the pacer scheduled it: vegeta stamps
// Result.Timestamp as the hit begins, and Seq is the arrival's index.
func vegetaMain(args []string) error {
	fs := flag.NewFlagSet("vegeta", flag.ContinueOnError)
	url := fs.String("url", "", "server base URL")
	rate := fs.Int("rate", 1000, "requests per second")
	dur := fs.Duration("duration", 10*time.Second, "sending time")
	if err := fs.Parse(args); err != nil {
		return err
	}
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":10}`)
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: "POST", URL: *url + "/v1/chat/completions", Body: body,
		Header: http.Header{"Content-Type": []string{"application/json"}}})
	atk := vegeta.NewAttacker(vegeta.KeepAlive(true))
	pacer := vegeta.ConstantPacer{Freq: *rate, Per: time.Second}
	var res paceResult
	var sends []time.Time
	var seqs []uint64
	start := time.Now()
	for r := range atk.Attack(tr, pacer, *dur, "check") {
		sends, seqs = append(sends, r.Timestamp), append(seqs, r.Seq)
		if r.Error != "" || r.Code != http.StatusOK {
			res.Failed++
		}
	}
	res.Sent = len(sends)
	res.Rate = achievedRate(sends)
	period := time.Second / time.Duration(*rate)
	for i, t := range sends {
		res.LagMS = append(res.LagMS, float64(t.Sub(start.Add(time.Duration(seqs[i])*period)))/1e6)
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// achievedRate is (n-1) sends over the time from the first to the last.
func achievedRate(sends []time.Time) float64 {
	if len(sends) < 2 {
		return 0
	}
	first, last := sends[0], sends[0]
	for _, t := range sends {
		if t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	return float64(len(sends)-1) / last.Sub(first).Seconds()
}
