package scan_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// The benchmark cluster: 10,000 volumes, 10,100 engines (one volume in a
// hundred stuck with two), 30,000 replicas, 10,000 VolumeAttachments.
const (
	benchNS      = testenv.BenchNamespace
	benchVolumes = 10000
)

var seedOnce sync.Once

// benchTarget is the cluster the benchmark reads: an external one (a
// separate process, so the server's heap and GC do not count against the
// client's; hack/bench.sh starts it) or, failing that, the test's own.
func benchTarget(b *testing.B) *rest.Config {
	if kc := os.Getenv("LONGHORN_BENCH_KUBECONFIG"); kc != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			b.Fatal(err)
		}
		return cfg
	}
	seedOnce.Do(func() {
		start := time.Now()
		create := func(ctx context.Context, u *unstructured.Unstructured) error {
			_, err := cluster.Create(ctx, u)
			return err
		}
		if err := testenv.Seed(context.Background(), create, benchNS, testenv.SeedOptions{Volumes: benchVolumes}); err != nil {
			b.Fatalf("seeding: %v", err)
		}
		b.Logf("seeded in-process in %s; peak-heap includes the API server", time.Since(start).Round(time.Millisecond))
	})
	return cluster.RESTConfig()
}

// counting counts HTTP requests made through a client.
type counting struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

func benchClient(b *testing.B) (*readstate.Client, *atomic.Int64) {
	n := &atomic.Int64{}
	cfg := rest.CopyConfig(benchTarget(b))
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return counting{rt, n} }
	cfg.QPS, cfg.Burst = -1, 0
	c, err := readstate.NewClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c, n
}

// peak samples the heap while f runs.
func peak(f func()) uint64 {
	var max atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max.Load() {
				max.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	return max.Load()
}

// BenchmarkScan compares, with one client, the bare paginated LISTs of the
// resources scan reads (bodies read, not decoded) with the whole scan (LISTs,
// decoding into our structs, classification). Run: make bench.
func BenchmarkScan(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds 60,000 objects")
	}
	benchTarget(b)
	ctx := context.Background()
	resources := []longhorn.Resource{longhorn.Volumes, longhorn.Engines, longhorn.Replicas, longhorn.VolumeAttachments, longhorn.InstanceManagers}

	b.Run("bare-lists", func(b *testing.B) {
		c, n := benchClient(b)
		var heap uint64
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			heap = peak(func() {
				for _, r := range resources {
					if err := bareList(ctx, c.REST, r.Plural); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.ReportMetric(float64(n.Load())/float64(b.N), "requests/op")
		b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MB")
	})
	b.Run("scan", func(b *testing.B) {
		c, n := benchClient(b)
		var heap uint64
		var res detect.Result
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			heap = peak(func() {
				st, err := readstate.Load(ctx, c, readstate.LoadOptions{Namespace: benchNS})
				if err != nil {
					b.Fatal(err)
				}
				res = detect.Classify(st, detect.Options{})
			})
		}
		b.StopTimer()
		if res.Volumes == 0 || len(res.Findings) != (res.Volumes+99)/100 {
			b.Fatalf("scanned %d volumes with %d findings", res.Volumes, len(res.Findings))
		}
		b.ReportMetric(float64(n.Load())/float64(b.N), "requests/op")
		b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MB")
	})
}

func bareList(ctx context.Context, rc rest.Interface, plural string) error {
	cont := ""
	for {
		req := rc.Get().Namespace(benchNS).Resource(plural).Param("limit", "500")
		if cont != "" {
			req = req.Param("continue", cont)
		}
		body, err := req.Stream(ctx)
		if err != nil {
			return err
		}
		// The continue token is the only thing a bare LIST must decode.
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
		}
		raw, err := io.ReadAll(body)
		body.Close()
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return err
		}
		if page.Metadata.Continue == "" {
			return nil
		}
		cont = page.Metadata.Continue
	}
}
