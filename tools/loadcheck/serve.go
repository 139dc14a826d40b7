package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// server streams OpenAI chat chunks, one token each, flushing each chunk
// so that each is a write of its own. With a gap it sends chunk k at
// k×gap after the request arrived and logs when it began writing each, so
// that a client's timestamps can be compared with the server's.
type server struct {
	chunks int
	gap    time.Duration
	next   atomic.Int64

	mu      sync.Mutex
	flushes map[int64][]int64 // request number → unix ns at which each chunk's write began
}

// serveMain is the server process: it prints the address it listens on,
// then serves until killed.
func serveMain(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	chunks := fs.Int("chunks", 200, "content chunks per response")
	gap := fs.Duration("gap", 0, "time between chunks (0: as fast as possible)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s := &server{chunks: *chunks, gap: *gap, flushes: map[int64][]int64{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	})
	mux.HandleFunc("GET /flushes", s.dump)
	fmt.Println(ln.Addr().String())
	os.Stdout.Sync()
	return http.Serve(ln, mux)
}

// chunkPrefix and chunkSuffix surround each token: a vLLM-shaped chunk.
const (
	chunkPrefix = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732880000,"model":"m","choices":[{"index":0,"delta":{"content":" tok`
	chunkSuffix = `"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
)

// chat answers with s.chunks content chunks, a finish chunk, a usage chunk
// and [DONE]. With a gap the usage's prompt_tokens is the request's number,
// so that records can be matched with the flush log.
func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	id := s.next.Add(1)
	start := time.Now()
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	var log []int64
	if s.gap > 0 {
		log = make([]int64, 0, s.chunks)
	}
	buf := make([]byte, 0, 256)
	for k := range s.chunks {
		if s.gap > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(k+1) * s.gap)))
		}
		buf = append(strconv.AppendInt(append(buf[:0], chunkPrefix...), int64(k), 10), chunkSuffix...)
		if log != nil {
			log = append(log, time.Now().UnixNano())
		}
		w.Write(buf)
		f.Flush()
	}
	usage := fmt.Sprintf(`"completion_tokens":%d`, s.chunks)
	if log != nil {
		usage = fmt.Sprintf(`"prompt_tokens":%d,`, id) + usage
	}
	fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1732880000,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"+
		"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1732880000,\"model\":\"m\",\"choices\":[],\"usage\":{%s}}\n\n"+
		"data: [DONE]\n\n", usage)
	if log != nil {
		s.mu.Lock()
		s.flushes[id] = log
		s.mu.Unlock()
	}
}

// dump writes the flush log as JSON: {"request number": [unix ns, ...]}.
func (s *server) dump(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bw := bufio.NewWriter(w)
	json.NewEncoder(bw).Encode(s.flushes)
	bw.Flush()
}
