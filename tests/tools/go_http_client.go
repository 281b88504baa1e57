// go_http_client: closed-loop HTTP/1.1 load through Go's net/http client, so
// that the lab meets the retry rules of the transport most services use.
//
// Each phase "WORKERS:SECONDS" (-phases 7:3,50:6) adds workers until its end;
// every worker sends GET -url, waits for the answer, and sends again, until
// its phase ends. Workers of a phase start together with it, so "7:3,43:6"
// gives 7 workers for 3 s, then 50 for 6 s.
//
// The transport is a clone of http.DefaultTransport: its retry rules
// (a request on a reused connection that failed before any byte of the
// answer is sent again on a new connection, GET and HEAD only) are the
// default ones. -idle-per-host sets MaxIdleConnsPerHost (Go's default 2:
// with more workers, most answers close their connection).
//
// A transparent retry shows as a second attempt at a connection for one
// request (httptrace GetConn). The JSON summary on stdout counts the requests by
// outcome, the connections they took, and the time to an answer or an error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type phase struct {
	workers int
	length  time.Duration
}

type result struct {
	outcome  string // ok, http_<status>, reset, refused, timeout, eof, other
	attempts int    // connections the request asked for (GetConn calls)
	reused   int    // of which reused from the idle pool
	ms       float64
}

type summary struct {
	Requests   int            `json:"requests"`
	Outcomes   map[string]int `json:"outcomes"`
	Retried    int            `json:"retried"`     // requests sent again by the transport
	Retries    int            `json:"retries"`     // times they were sent again
	RetriedOK  int            `json:"retried_ok"`  // ... and then answered
	NewConns   int            `json:"new_conns"`   // connections dialled (or tried)
	OKP50ms    float64        `json:"ok_p50_ms"`   // -1: none
	OKP99ms    float64        `json:"ok_p99_ms"`   // -1: none
	FailP99ms  float64        `json:"fail_p99_ms"` // time to an error; -1: none
	DurationS  float64        `json:"duration_s"`
	Errors     []string       `json:"errors_sample"` // a few error texts, for the log
	errorsSeen map[string]bool
}

func parsePhases(text string) ([]phase, error) {
	var phases []phase
	for _, item := range strings.Split(text, ",") {
		w, s, ok := strings.Cut(item, ":")
		workers, err1 := strconv.Atoi(w)
		seconds, err2 := strconv.ParseFloat(s, 64)
		if !ok || err1 != nil || err2 != nil || workers < 0 || seconds <= 0 {
			return nil, fmt.Errorf("phase %q: want WORKERS:SECONDS", item)
		}
		phases = append(phases, phase{workers, time.Duration(seconds * float64(time.Second))})
	}
	return phases, nil
}

func classify(err error) string {
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	}
	return "other"
}

func one(client *http.Client, url string, timeout time.Duration) (result, string) {
	var r result
	// GetConn starts each attempt, a dial that fails included; GotConn
	// follows only the attempts that got a connection.
	trace := &httptrace.ClientTrace{
		GetConn: func(string) { r.attempts++ },
		GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				r.reused++
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		return result{outcome: "other"}, err.Error()
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	r.ms = float64(time.Since(start).Microseconds()) / 1000.0
	switch {
	case err != nil:
		r.outcome = classify(err)
		return r, err.Error()
	case resp.StatusCode != http.StatusOK:
		r.outcome = "http_" + strconv.Itoa(resp.StatusCode)
	default:
		r.outcome = "ok"
	}
	return r, ""
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return -1
	}
	rank := int(p*float64(len(sorted))/100.0 + 0.999999)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func main() {
	url := flag.String("url", "", "the URL to GET")
	phasesText := flag.String("phases", "", "WORKERS:SECONDS,... workers added per phase")
	idle := flag.Int("idle-per-host", http.DefaultMaxIdleConnsPerHost, "MaxIdleConnsPerHost")
	timeout := flag.Duration("timeout", 5*time.Second, "a request's deadline")
	flag.Parse()
	phases, err := parsePhases(*phasesText)
	if err != nil || *url == "" {
		fmt.Fprintln(os.Stderr, "go_http_client: -url and -phases WORKERS:SECONDS,... are required:", err)
		os.Exit(2)
	}

	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = *idle
	client := &http.Client{Transport: transport}

	var mu sync.Mutex
	sum := summary{Outcomes: map[string]int{}, errorsSeen: map[string]bool{}}
	var okMs, failMs []float64
	record := func(r result, text string) {
		mu.Lock()
		defer mu.Unlock()
		sum.Requests++
		sum.Outcomes[r.outcome]++
		sum.NewConns += r.attempts - r.reused
		if r.attempts > 1 {
			sum.Retried++
			sum.Retries += r.attempts - 1
			if r.outcome == "ok" {
				sum.RetriedOK++
			}
		}
		if r.outcome == "ok" {
			okMs = append(okMs, r.ms)
		} else {
			failMs = append(failMs, r.ms)
		}
		if text != "" && len(sum.Errors) < 5 && !sum.errorsSeen[r.outcome] {
			sum.errorsSeen[r.outcome] = true
			sum.Errors = append(sum.Errors, r.outcome+": "+text)
		}
	}

	start := time.Now()
	var total time.Duration
	for _, p := range phases {
		total += p.length
	}
	end := start.Add(total)
	var wg sync.WaitGroup
	phaseStart := start
	for _, p := range phases {
		time.Sleep(time.Until(phaseStart))
		for i := 0; i < p.workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					r, text := one(client, *url, *timeout)
					record(r, text)
				}
			}()
		}
		phaseStart = phaseStart.Add(p.length)
	}
	wg.Wait()
	transport.CloseIdleConnections()

	sort.Float64s(okMs)
	sort.Float64s(failMs)
	sum.OKP50ms = percentile(okMs, 50)
	sum.OKP99ms = percentile(okMs, 99)
	sum.FailP99ms = percentile(failMs, 99)
	sum.DurationS = time.Since(start).Seconds()
	out, _ := json.MarshalIndent(sum, "", "  ")
	fmt.Println(string(out))
}
