// Command servebench measures LLM inference servers against serving objectives.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/servebench/servebench/internal/cli"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	go stopOnSignal(cancel)
	os.Exit(cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// stopOnSignal cancels the run on the first Ctrl-C or SIGTERM, so that it
// stops sending, lets in-flight requests finish and writes its summary; a
// second signal exits at once. Records are written as each request ends,
// so nothing measured is lost either way.
func stopOnSignal(cancel context.CancelFunc) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	fmt.Fprintln(os.Stderr, "\nstopping: nothing new is started and work in flight may finish (signal again to exit now)")
	cancel()
	<-sigs
	fmt.Fprintln(os.Stderr, "exiting now; records written so far are complete: servebench report DIR summarises them")
	os.Exit(cli.ExitInterrupted)
}
