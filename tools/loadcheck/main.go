// Command loadcheck measures servebench's client as a user runs it: the
// built binary against a streaming server in a separate process, side by
// side in one run with the plainest Go client (http.Post and a bufio line
// loop) or, for the open loop, vegeta's pacer, and prints the ratios.
// docs/PERFORMANCE.md gives the commands and the figures.
//
//	go build -o /tmp/servebench ./cmd/servebench && (cd tools && go build -o /tmp/loadcheck ./loadcheck)
//	/tmp/loadcheck -servebench /tmp/servebench -repeats 3 throughput streams rate
package main

import (
	"flag"
	"fmt"
	"os"
)

// config is the check's command line.
type config struct {
	servebench string
	repeats    int
	streams    int // throughput: concurrent streams
	requests   int // throughput: requests in all
	chunks     int // throughput: chunks per response
	prompt     int // throughput: prompt tokens
	many       int // streams: concurrent streams
	rate       int // rate: requests per second
	seconds    int // rate: sending time
	extra      []string
}

func main() {
	if len(os.Args) > 1 {
		modes := map[string]func([]string) error{"serve": serveMain, "plain": plainMain, "vegeta": vegetaMain}
		if f, ok := modes[os.Args[1]]; ok {
			if err := f(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "loadcheck:", err)
				os.Exit(1)
			}
			return
		}
	}
	if err := check(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadcheck:", err)
		os.Exit(1)
	}
}

func check(args []string) error {
	var c config
	fs := flag.NewFlagSet("loadcheck", flag.ContinueOnError)
	fs.StringVar(&c.servebench, "servebench", "", "the built servebench binary (required)")
	fs.IntVar(&c.repeats, "repeats", 3, "measurements of each scenario, alternating which client goes first")
	fs.IntVar(&c.streams, "c", 200, "throughput: concurrent streams")
	fs.IntVar(&c.requests, "n", 4000, "throughput: requests in all")
	fs.IntVar(&c.chunks, "chunks", 200, "throughput: one-token chunks per response")
	fs.IntVar(&c.prompt, "prompt-tokens", 512, "throughput: servebench's prompt length")
	fs.IntVar(&c.many, "many", 10000, "streams: concurrent streams")
	fs.IntVar(&c.rate, "rate", 1000, "rate: requests per second")
	fs.IntVar(&c.seconds, "seconds", 10, "rate: seconds of sending")
	fs.Func("sb-flag", "an extra flag for every servebench run (repeatable), e.g. -sb-flag=--no-telemetry", func(v string) error {
		c.extra = append(c.extra, v)
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: loadcheck -servebench BINARY [flags] throughput|streams|rate ...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.servebench == "" || fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("name the servebench binary and at least one scenario")
	}
	scenarios := map[string]func(config) error{"throughput": throughput, "streams": streams, "rate": rate}
	for _, name := range fs.Args() {
		f, ok := scenarios[name]
		if !ok {
			return fmt.Errorf("scenario %q: want throughput, streams or rate", name)
		}
		if err := f(c); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
