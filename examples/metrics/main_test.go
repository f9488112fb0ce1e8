package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestMetricsExample runs the example against a real ZooKeeper and scrapes
// /metrics until the workers' acquisitions show up.
func TestMetricsExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		done <- run(ctx, &out, config{listen: "127.0.0.1:0", workers: 3}, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run: %v\n%s", err, &out)
	}
	acquisitions := regexp.MustCompile(`(?m)^zklock_acquisitions_total\{kind="mutex",path="[^"]+"\} (\d+)$`)
	deadline := time.Now().Add(time.Minute)
	for {
		body := scrape(t, "http://"+addr+"/metrics")
		if m := acquisitions.FindSubmatch(body); m != nil {
			if n, _ := strconv.Atoi(string(m[1])); n >= 10 {
				require.Regexp(t, `(?m)^zklock_session_state\{state="connected"\} 1$`, string(body))
				require.Regexp(t, `(?m)^zklock_hold_seconds_count\{kind="mutex",path="[^"]+"\} [1-9]`, string(body))
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "no 10 acquisitions in /metrics within a minute:\n%s", body)
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	require.NoError(t, <-done)
	require.Contains(t, out.String(), "serving http://"+addr+"/metrics")
}

func scrape(t *testing.T, url string) []byte {
	t.Helper()
	// No keep-alive: no idle connection outlives the test (goleak).
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "example.com:80", "nonsense"} {
		_, err := listenLoopback(addr)
		require.Error(t, err, addr)
	}
}
