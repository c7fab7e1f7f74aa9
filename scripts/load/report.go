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
	dropped   int64
	startedAt time.Time
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

func (r *report) write(w io.Writer) {
	fmt.Fprintf(w, "## Load run %s\n\n", r.startedAt.UTC().Format(time.RFC3339))
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
	fmt.Fprintln(w, "Job scaling: the same backlog of compliance jobs drained by 1, then 2 workers (span: first job started to last completed, from the records; wall: workers started to all complete):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workers x concurrency | backlog (jobs x ids) | span | wall | jobs/min | ids/s | vs 1 worker | workers CPU (cores) |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|")
	base := r.scale[0].perMinute
	for _, s := range r.scale {
		conc := "8"
		if s.concurrency > 0 {
			conc = fmt.Sprint(s.concurrency)
		}
		fmt.Fprintf(w, "| %d x %s | %d x %d | %.1f s | %.1f s | %.1f | %.0f | %.2f | %.2f |\n", s.workers, conc, s.jobs, s.lines, s.span.Seconds(), s.drain.Seconds(),
			s.perMinute, s.perMinute*float64(s.lines)/60, s.perMinute/base, s.cores)
	}
	fmt.Fprintln(w)
}
