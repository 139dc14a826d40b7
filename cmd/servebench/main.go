// Command servebench measures LLM inference servers against serving objectives.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/servebench/servebench/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
