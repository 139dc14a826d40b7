package cli

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestLiveArgs(t *testing.T) {
	for _, c := range []struct {
		args, want []string
	}{
		// alone: a free loopback port
		{[]string{"--live", "--out", "runs/a"}, []string{"--live", "--out", "runs/a"}},
		// an address after it is its value
		{[]string{"--live", "127.0.0.1:8089", "--json"}, []string{"--live=127.0.0.1:8089", "--json"}},
		{[]string{"-live", ":8089"}, []string{"-live=:8089"}},
		{[]string{"--live=[::1]:8089"}, []string{"--live=[::1]:8089"}},
		// a URL or a path is not an address
		{[]string{"--live", "http://x:1/"}, []string{"--live", "http://x:1/"}},
		// after "--" nothing is a flag
		{[]string{"--", "--live", "127.0.0.1:1"}, []string{"--", "--live", "127.0.0.1:1"}},
	} {
		if got := liveArgs(c.args); !slices.Equal(got, c.want) {
			t.Errorf("liveArgs(%q): got %q, want %q", c.args, got, c.want)
		}
	}
}

func TestLiveFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		on   bool
		addr string
	}{
		{nil, false, ""},
		{[]string{"--live"}, true, ""},
		{[]string{"--live", "localhost:8089"}, true, "localhost:8089"},
		{[]string{"--live=false"}, false, ""},
	} {
		var f runFlags
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.define(fs)
		if err := fs.Parse(liveArgs(c.args)); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if f.live.addr.on != c.on || f.live.addr.addr != c.addr {
			t.Errorf("%q: got on %v addr %q, want %v %q", c.args, f.live.addr.on, f.live.addr.addr, c.on, c.addr)
		}
	}
}

func TestLiveUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--live-linger", "5m"}, "give --live too"},
		{[]string{"run", "--live", "--live-linger", "-1s"}, "must not be negative"},
		{[]string{"run", "--live", "nohost"}, "unexpected argument"},
		{[]string{"run", "--live=nohost"}, "is not host:port"},
	} {
		code, _, stderr := runMainOnce(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want a usage error saying %q", c.args, code, stderr, c.want)
		}
	}
}
