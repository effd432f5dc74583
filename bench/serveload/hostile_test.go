package serveload

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary be HostileRun's generator, as 'rfm bench
// serve' is.
func TestMain(m *testing.M) {
	if spec := os.Getenv(HostileEnv); spec != "" {
		if err := RunHostileChild(context.Background(), spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A short hostile run: the unloaded phase and one with unknown keys. The
// hostile requests that end are refused, the ordinary ones answered (200),
// every phase has its latencies, and the ratios are to the same
// scheduling's unloaded p99.
func TestHostileRun(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	res, err := HostileRun(context.Background(), HostileOptions{ModelSource: ModelSource{Centers: 200, Inputs: 6, Version: "test"},
		Kinds: []string{"unknown-keys"}, Hostile: 3, Slow: 1, Ordinary: 2, Duration: 700 * time.Millisecond, Warm: 300 * time.Millisecond,
		BatchWait: -1, BatchRows: 4096, CompareFCFS: true, generatorBinary: exe})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 4 {
		t.Fatalf("%d phases, want none and unknown-keys, each fair and fcfs", len(res.Phases))
	}
	unloaded := map[string]float64{}
	for i, p := range res.Phases {
		want := []string{"none", "none", "unknown-keys", "unknown-keys"}[i]
		if p.Kind != want || p.Scheduling != []string{"fair", "fcfs"}[i%2] {
			t.Fatalf("phase %d is %s/%s", i, p.Kind, p.Scheduling)
		}
		if p.Requests == 0 || p.Status["200"] != p.Requests || p.P50ms > p.P99ms {
			t.Errorf("%s/%s: %d ordinary requests, statuses %v, p50 %v p99 %v", p.Kind, p.Scheduling, p.Requests, p.Status, p.P50ms, p.P99ms)
		}
		if p.Kind == "none" {
			unloaded[p.Scheduling] = p.P99ms
			if p.HostileClients != 0 || p.P99Ratio != 1 {
				t.Errorf("unloaded phase: %d hostile clients, ratio %v", p.HostileClients, p.P99Ratio)
			}
			continue
		}
		// How many hostile requests end in the short phase depends on the
		// machine; those that do are refused, never answered 200 or 5xx
		// (503 is the budget's refusal).
		if p.HostileClients != 3 || p.HostileStatus == nil {
			t.Errorf("%s/%s: %d hostile clients, answers %v", p.Kind, p.Scheduling, p.HostileClients, p.HostileStatus)
		}
		for code := range p.HostileStatus {
			if code != "400" && code != "413" && code != "503" && code != "transport error" {
				t.Errorf("%s/%s: a hostile request was answered %s", p.Kind, p.Scheduling, code)
			}
		}
		if r := p.P99ms / unloaded[p.Scheduling]; r != p.P99Ratio {
			t.Errorf("%s/%s: ratio %v, want %v", p.Kind, p.Scheduling, p.P99Ratio, r)
		}
	}
}
