package main

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// results is the attack's outcome per endpoint.
type results struct {
	mu        sync.Mutex
	endpoints map[string]*vegeta.Metrics
	// samples is the first error answer of each endpoint and status.
	samples map[string]string
}

func (r *results) add(res *vegeta.Result) {
	name := endpointOf(res.Method, res.URL)
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.endpoints[name]
	if m == nil {
		m = &vegeta.Metrics{}
		r.endpoints[name] = m
	}
	m.Add(res)
	if res.Code == 0 || res.Code >= 400 {
		key := fmt.Sprintf("%s %d", name, res.Code)
		if _, seen := r.samples[key]; !seen {
			msg := res.Error
			if len(res.Body) > 0 {
				msg = string(res.Body[:min(len(res.Body), 300)])
			}
			r.samples[key] = msg
		}
	}
}

func (r *results) close() {
	for _, m := range r.endpoints {
		m.Close()
	}
}

// fiveXX counts answers >= 500 and transport errors (code 0).
func (r *results) fiveXX() (n int) {
	for _, m := range r.endpoints {
		for code, c := range m.StatusCodes {
			if code == "0" || code >= "500" {
				n += c
			}
		}
	}
	return n
}

var idSegment = regexp.MustCompile(`^[0-9]+$`)

// endpointOf names a request by its method and path, ids replaced.
func endpointOf(method, rawURL string) string {
	path := rawURL
	if i := strings.Index(path, "://"); i >= 0 {
		path = path[i+3:]
		if j := strings.IndexByte(path, '/'); j >= 0 {
			path = path[j:]
		}
	}
	path, _, _ = strings.Cut(path, "?")
	path, _, _ = strings.Cut(path, "#")
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if (i > 1 && idSegment.MatchString(p)) || (i > 0 && (parts[i-1] == "accounts" || parts[i-1] == "do_not_reach_lists")) {
			parts[i] = "{id}"
		}
	}
	return method + " " + strings.Join(parts, "/")
}

// sample is one RSS reading (MB) of the API and each worker.
type sample struct {
	at      time.Duration
	api     float64
	workers []float64
	// apiCPU and workersCPU are the cores the API and the workers used
	// since the previous sample; hostBusy the whole machine's (all
	// processes, other users' included), in percent of all its CPUs.
	apiCPU, workersCPU, hostBusy float64
}

// queueSample is asynq's processed count per queue at one moment.
type queueSample struct {
	at        time.Duration
	processed map[string]int
}

// attack runs every flow at its share of rate for du, sampling RSS and the
// queues every interval.
func attack(ctx context.Context, s *stack, m *mix, rate float64, du, interval time.Duration) (*results, []sample, []queueSample) {
	res := &results{endpoints: map[string]*vegeta.Metrics{}, samples: map[string]string{}}
	var wg sync.WaitGroup
	for _, f := range m.flows {
		per := rate * float64(f.weight) / 100
		if per <= 0 {
			continue
		}
		pacer := vegeta.Rate{Freq: max(1, int(per*100+0.5)), Per: 100 * time.Second}
		a := vegeta.NewAttacker(vegeta.Timeout(60*time.Second), vegeta.KeepAlive(true), vegeta.Workers(4), vegeta.MaxWorkers(256))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range a.Attack(f.targeter(), pacer, du, f.name) {
				res.add(r)
				f.onResult(r)
			}
		}()
		go func() { <-ctx.Done(); a.Stop() }()
	}
	var samples []sample
	var queues []queueSample
	insp := inspector(s)
	start := time.Now()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	cpu := newCPUMeter()
	record := func() {
		at := time.Since(start).Round(time.Second)
		if len(samples) > 0 && samples[len(samples)-1].at == at {
			return
		}
		smp := sample{at: at, api: rssMB(s.apiPID)}
		for _, pid := range s.workerPIDs() {
			smp.workers = append(smp.workers, rssMB(pid))
		}
		smp.apiCPU, smp.workersCPU, smp.hostBusy = cpu.read(s.apiPID, s.workerPIDs())
		samples = append(samples, smp)
		if insp != nil {
			queues = append(queues, queueSample{at: at, processed: processedByQueue(insp)})
		}
	}
	record()
	for {
		select {
		case <-tick.C:
			record()
		case <-done:
			record()
			if insp != nil {
				insp.Close()
			}
			res.close()
			return res, samples, queues
		}
	}
}

func inspector(s *stack) *asynq.Inspector {
	if s.redisURL == "" {
		return nil
	}
	opt, err := asynq.ParseRedisURI(s.redisURL)
	if err != nil {
		return nil
	}
	return asynq.NewInspector(opt)
}

// processedByQueue is asynq's total processed count of every queue.
func processedByQueue(insp *asynq.Inspector) map[string]int {
	out := map[string]int{}
	qs, err := insp.Queues()
	if err != nil {
		return out
	}
	for _, q := range qs {
		if info, err := insp.GetQueueInfo(q); err == nil {
			out[q] = info.ProcessedTotal
		}
	}
	return out
}

// pendingTasks is the number of tasks not finished in every queue
// (pending, active, scheduled, retry) and the archived (failed) ones.
func pendingTasks(insp *asynq.Inspector) (open, archived int, err error) {
	qs, err := insp.Queues()
	if err != nil {
		return 0, 0, fmt.Errorf("list queues: %w", err)
	}
	for _, q := range qs {
		info, err := insp.GetQueueInfo(q)
		if err != nil {
			return 0, 0, fmt.Errorf("queue %s: %w", q, err)
		}
		open += info.Pending + info.Active + info.Scheduled + info.Retry
		archived += info.Archived
	}
	return open, archived, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
