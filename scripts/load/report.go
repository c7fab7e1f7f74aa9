package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// report is everything a run measured.
type report struct {
	rate      float64
	duration  time.Duration
	workers   int
	res       *results
	samples   []sample
	queues    []queueSample
	done      completion
	scale     []scaleRun
	scalePin  bool
	scaleOnly bool
	dropped   int64
	startedAt time.Time
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

func (r *report) write(w io.Writer) {
	fmt.Fprintf(w, "## Load run %s\n\n", r.startedAt.UTC().Format(time.RFC3339))
	if r.scaleOnly {
		fmt.Fprintf(w, "Scaling phase only, %d CPUs (GOMAXPROCS %d)\n\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
		r.scaling(w)
		return
	}
	fmt.Fprintf(w, "%.1f req/s for %s, %d worker(s), %d CPUs (GOMAXPROCS %d); follow-up steps dropped: %d\n\n",
		r.rate, r.duration, r.workers, runtime.NumCPU(), runtime.GOMAXPROCS(0), r.dropped)
	r.endpoints(w)
	r.rss(w)
	r.throughput(w)
	r.completion(w)
	r.scaling(w)
}

func (r *report) endpoints(w io.Writer) {
	fmt.Fprintln(w, "| endpoint | requests | p50 ms | p90 ms | p99 ms | max ms | errors by status |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|")
	for _, name := range sortedKeys(r.res.endpoints) {
		m := r.res.endpoints[name]
		var errs []string
		for _, code := range sortedKeys(m.StatusCodes) {
			if code == "0" || code >= "400" {
				errs = append(errs, fmt.Sprintf("%s: %d", code, m.StatusCodes[code]))
			}
		}
		if len(errs) == 0 {
			errs = []string{"none"}
		}
		l := m.Latencies
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s |\n", name, m.Requests, ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max), strings.Join(errs, ", "))
	}
	fmt.Fprintln(w)
	for _, key := range sortedKeys(r.res.samples) {
		fmt.Fprintf(w, "- first %s answer: `%s`\n", key, strings.ReplaceAll(r.res.samples[key], "\n", " "))
	}
	if len(r.res.samples) > 0 {
		fmt.Fprintln(w)
	}
}

func (r *report) rss(w io.Writer) {
	if len(r.samples) == 0 {
		return
	}
	fmt.Fprintln(w, "RSS (MB, VmRSS) at each sample; CPU since the previous one (cores; host: the whole machine, other users included):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| t | api RSS | worker RSS | api CPU | workers CPU | host busy |")
	fmt.Fprintln(w, "|---:|---:|---|---:|---:|---:|")
	for _, s := range r.samples {
		ws := make([]string, len(s.workers))
		for i, v := range s.workers {
			ws[i] = fmt.Sprintf("%.1f", v)
		}
		fmt.Fprintf(w, "| %s | %.1f | %s | %.2f | %.2f | %.0f%% |\n", s.at, s.api, strings.Join(ws, " / "), s.apiCPU, s.workersCPU, s.hostBusy)
	}
	apiFirst, apiLast := window(r.samples, func(s sample) float64 { return s.api })
	wkFirst, wkLast := window(r.samples, func(s sample) float64 { return sum(s.workers) })
	fmt.Fprintf(w, "\nFlat check (mean of the first minute vs the last minute): API %.1f -> %.1f MB (%+.1f), workers (sum) %.1f -> %.1f MB (%+.1f)\n\n",
		apiFirst, apiLast, apiLast-apiFirst, wkFirst, wkLast, wkLast-wkFirst)
}

// window is the mean of v over the first and the last minute of samples.
func window(samples []sample, v func(sample) float64) (first, last float64) {
	end := samples[len(samples)-1].at
	var fs, ls float64
	var fn, ln int
	for _, s := range samples {
		if s.at < time.Minute {
			fs += v(s)
			fn++
		}
		if s.at >= end-time.Minute {
			ls += v(s)
			ln++
		}
	}
	return fs / float64(max(fn, 1)), ls / float64(max(ln, 1))
}

func sum(v []float64) (t float64) {
	for _, x := range v {
		t += x
	}
	return t
}

func (r *report) throughput(w io.Writer) {
	if len(r.queues) < 2 {
		return
	}
	first, last := r.queues[0], r.queues[len(r.queues)-1]
	minutes := (last.at - first.at).Minutes()
	fmt.Fprintln(w, "| queue | tasks processed | per minute |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, q := range sortedKeys(last.processed) {
		n := last.processed[q] - first.processed[q]
		if n > 0 {
			fmt.Fprintf(w, "| %s | %d | %.1f |\n", q, n, float64(n)/minutes)
		}
	}
	fmt.Fprintln(w)
}

func (r *report) completion(w io.Writer) {
	c := r.done
	fmt.Fprintf(w, "Completion (records, %s after the attack): compliance jobs %d accepted, %d complete, %d failed; "+
		"media %d finalized, %d still processing, %d failed; do-not-reach batches %d accepted, %d pending, %d failed; "+
		"tasks still open %d, archived %d\n\n",
		c.waited.Round(time.Millisecond), c.jobsAccepted, c.jobsComplete, c.jobsFailed, c.mediaFinalized, c.mediaOpen, c.mediaFailed,
		c.batchesAccepted, c.batchesOpen, c.batchesFailed, c.tasksOpen, c.tasksArchived)
}

func (r *report) scaling(w io.Writer) {
	if len(r.scale) == 0 {
		return
	}
	pin := "workers not pinned"
	if r.scalePin {
		pin = "worker i pinned to CPU i mod " + fmt.Sprint(runtime.NumCPU()) + " (taskset); API, PostgreSQL, Redis and this program not pinned"
	}
	fmt.Fprintf(w, "Job scaling: the same backlog of each family drained by each number of workers (%s). "+
		"rate = (completed - 1) / (first to last completion, from the records; webhooks: the receiver's first arrival to last answer); "+
		"wall = workers started to all complete:\n\n", pin)
	fmt.Fprintln(w, "| family | workers x concurrency | CPUs | backlog | complete | wall | rate /min | wall rate /min | vs first |")
	fmt.Fprintln(w, "|---|---:|---|---|---:|---:|---:|---:|---:|")
	base := map[string]float64{}
	for _, s := range r.scale {
		if _, ok := base[s.family]; !ok {
			base[s.family] = s.perMinute
		}
		ratio := 0.0
		if b := base[s.family]; b > 0 {
			ratio = s.perMinute / b
		}
		done := fmt.Sprintf("%d/%d %s", s.complete, s.items, s.unit)
		if s.duplicates > 0 {
			done += fmt.Sprintf(", %d duplicate", s.duplicates)
		}
		fmt.Fprintf(w, "| %s | %d x %s | %s | %s | %s | %.1f s | %.0f | %.0f | %.2f |\n", s.family, s.workers, concName(s.concurrency), cpus(s.pinned),
			s.backlog, done, s.drain.Seconds(), s.perMinute, s.wallPerMinute, ratio)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "CPU over each drain, in cores (PostgreSQL: this stack's database's backends / every backend, other sessions' included; stack: workers, API, this database's backends, Redis and the load generator, against the cores the host was busy, every process of every user):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| family | workers | each worker | api | PostgreSQL | Redis | load gen | stack / host busy | load avg (start -> end) | saturated |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---|---|")
	for _, s := range r.scale {
		u := s.use
		ws := make([]string, len(u.workers))
		for i, v := range u.workers {
			ws[i] = fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %.2f | %.2f / %.2f | %.2f | %.2f | %.2f / %.2f (%.0f%%) | %s -> %s | %s |\n", s.family, s.workers, strings.Join(ws, " / "),
			u.api, u.pgOurs, u.pgAll, u.redis, u.loadgen, u.stackCores(), u.busyCores(), u.hostBusy, u.loadStart, u.loadEnd, s.saturated())
	}
	fmt.Fprintln(w)
}

func concName(c int) string {
	if c > 0 {
		return fmt.Sprint(c)
	}
	return "8"
}

func cpus(pinned []int) string {
	if pinned == nil {
		return "any"
	}
	s := make([]string, len(pinned))
	for i, c := range pinned {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}
