// Command servebench measures LLM inference servers against serving objectives.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/servebench/servebench/internal/cli"
	"github.com/servebench/servebench/internal/load"
)

// abortWait bounds how long a second signal waits for the requests in
// flight to be written as cancelled and the run's files to be completed.
const abortWait = time.Second

func main() {
	stop, cancel := context.WithCancel(context.Background())
	abort := make(chan struct{})
	go stopOnSignal(cancel, abort)
	os.Exit(cli.Main(load.WithAbort(stop, abort), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// stopOnSignal cancels the run on the first Ctrl-C or SIGTERM, so that it
// stops sending, lets in-flight requests finish within --grace and writes
// its summary. A second signal cancels the requests still in flight at
// once: each is written as a cancelled record with what it had received,
// and the process exits when the files are complete, within abortWait.
func stopOnSignal(cancel context.CancelFunc, abort chan struct{}) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	fmt.Fprintln(os.Stderr, "\nstopping: nothing new is started and work in flight may finish (signal again to cancel it)")
	cancel()
	<-sigs
	fmt.Fprintln(os.Stderr, "cancelling the requests in flight; their records are being written")
	close(abort)
	select {
	case <-sigs:
	case <-time.After(abortWait):
	}
	fmt.Fprintln(os.Stderr, "exiting now; records written so far are complete: servebench report DIR summarises them")
	os.Exit(cli.ExitInterrupted)
}
