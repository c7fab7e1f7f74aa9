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

// cpuSnap is the CPU time of a set of processes and of the host at one
// moment: the scaling phase takes one when the workers start and one when
// the backlog is drained, and reports the difference per process.
type cpuSnap struct {
	at                  time.Time
	hostBusy, hostTotal float64
	ticks               map[int]float64
	postgres, redis     []int // pids by name (every database's backends)
	loadAvg             string
}

// takeSnap reads pids and every postgres and redis-server process.
func takeSnap(pids ...int) cpuSnap {
	s := cpuSnap{at: time.Now(), ticks: map[int]float64{}}
	s.hostBusy, s.hostTotal = hostTicks()
	for _, pid := range pids {
		s.ticks[pid] = procTicks(pid)
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil {
			continue
		}
		switch strings.TrimSpace(string(comm)) {
		case "postgres":
			s.postgres = append(s.postgres, pid)
		case "redis-server":
			s.redis = append(s.redis, pid)
		default:
			continue
		}
		s.ticks[pid] = procTicks(pid)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			s.loadAvg = strings.Join(f[:3], " ")
		}
	}
	return s
}

// cores is the CPU pid used between a and b, in cores (a process absent
// from a started after it: all its time counts).
func cores(a, b cpuSnap, pid int) float64 {
	secs := b.at.Sub(a.at).Seconds()
	t, ok := b.ticks[pid]
	if !ok || secs <= 0 {
		return 0
	}
	return (t - a.ticks[pid]) / clockTicks / secs
}

// coresOf sums cores over pids.
func coresOf(a, b cpuSnap, pids []int) (c float64) {
	for _, pid := range pids {
		c += cores(a, b, pid)
	}
	return c
}

// hostBusyPct is the host's busy share between a and b (all CPUs, every
// process of every user).
func hostBusyPct(a, b cpuSnap) float64 {
	if d := b.hostTotal - a.hostTotal; d > 0 {
		return 100 * (b.hostBusy - a.hostBusy) / d
	}
	return 0
}
