package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// plainResult is what the plain client prints: its measured window (first
// send to last end), the chunks and requests in it, and with -stamp each
// request's chunk arrival times keyed by the server's request number.
type plainResult struct {
	Requests int               `json:"requests"`
	Failed   int               `json:"failed"`
	Chunks   int64             `json:"chunks"`
	WindowS  float64           `json:"window_s"`
	Stamps   map[int64][]int64 `json:"stamps,omitempty"`
}

// plainMain is the plainest Go client: c workers, each http.Post and a
// bufio line loop counting "data: " lines, until n requests are done.
func plainMain(args []string) error {
	fs := flag.NewFlagSet("plain", flag.ContinueOnError)
	url := fs.String("url", "", "server base URL")
	c := fs.Int("c", 200, "concurrent streams")
	n := fs.Int("n", 4000, "requests in all")
	stamp := fs.Bool("stamp", false, "timestamp every data line (for the lag check)")
	profile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	bodyFile := fs.String("body", "", "request body to send (default: a one-word prompt)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: *c}}
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":200}`)
	if *bodyFile != "" {
		var err error
		if body, err = os.ReadFile(*bodyFile); err != nil {
			return err
		}
	}
	var left atomic.Int64
	left.Store(int64(*n))
	var mu sync.Mutex
	res := plainResult{}
	if *stamp {
		res.Stamps = map[int64][]int64{}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for range *c {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				chunks, id, stamps, err := plainOne(hc, *url+"/v1/chat/completions", body, *stamp)
				mu.Lock()
				res.Requests++
				res.Chunks += int64(chunks)
				if err != nil {
					res.Failed++
				} else if stamps != nil {
					res.Stamps[id] = stamps
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.WindowS = time.Since(start).Seconds()
	return json.NewEncoder(os.Stdout).Encode(res)
}

// serverTrailers is how many data lines of each response carry no
// token (the finish chunk and the usage chunk): the line count less these
// is the content chunks, as servebench counts them.
const serverTrailers = 2

var usageKey = []byte(`"prompt_tokens":`)

// plainOne sends one request and counts its content lines; with stamp it
// also notes each line's arrival and the request number the usage carries.
func plainOne(hc *http.Client, url string, body []byte, stamp bool) (n int, id int64, stamps []int64, err error) {
	resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return n, id, stamps, fmt.Errorf("stream ended early: %w", err)
		}
		if bytes.HasPrefix(line, []byte("data: [DONE]")) {
			if !stamp {
				n -= serverTrailers
			}
			return n, id, stamps, nil
		}
		if !bytes.HasPrefix(line, []byte("data: ")) {
			continue
		}
		if !stamp {
			n++
			continue
		}
		if i := bytes.Index(line, usageKey); i >= 0 {
			rest := line[i+len(usageKey):]
			id, _ = strconv.ParseInt(string(rest[:bytes.IndexByte(rest, ',')]), 10, 64)
			continue
		}
		if bytes.Contains(line, []byte(`"content"`)) {
			n++
			stamps = append(stamps, time.Now().UnixNano())
		}
	}
}
