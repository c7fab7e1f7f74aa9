package main

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc CPU times (100 on Linux).
const clockTicks = 100

// cpuMeter turns /proc CPU counters into cores used between two reads.
type cpuMeter struct {
	last      time.Time
	procTicks map[int]float64
	hostBusy  float64
	hostTotal float64
}

func newCPUMeter() *cpuMeter {
	m := &cpuMeter{last: time.Now(), procTicks: map[int]float64{}}
	m.hostBusy, m.hostTotal = hostTicks()
	return m
}

// read returns the cores the API and the workers used since the last read
// and the host's busy percentage over the same span.
func (m *cpuMeter) read(api int, workers []int) (apiCores, workerCores, hostPct float64) {
	now := time.Now()
	secs := now.Sub(m.last).Seconds()
	m.last = now
	cores := func(pid int) float64 {
		t := procTicks(pid)
		prev, seen := m.procTicks[pid]
		m.procTicks[pid] = t
		if !seen || t < prev || secs <= 0 {
			return 0
		}
		return (t - prev) / clockTicks / secs
	}
	apiCores = cores(api)
	for _, w := range workers {
		workerCores += cores(w)
	}
	busy, total := hostTicks()
	if d := total - m.hostTotal; d > 0 {
		hostPct = 100 * (busy - m.hostBusy) / d
	}
	m.hostBusy, m.hostTotal = busy, total
	return apiCores, workerCores, hostPct
}

// procTicks is utime+stime of a process (/proc/<pid>/stat fields 14, 15).
func procTicks(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields from 3 on
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return u + k
}

// hostTicks is the machine's busy and total CPU time from /proc/stat.
func hostTicks() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}
