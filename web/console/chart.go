package console

// A bar chart drawn on the server as SVG (no script), shared by the usage
// and activity pages: groups of bars (a day, a minute), one bar per series
// in each group, scaled to the tallest bar. The template "chart"
// (layout.html) draws it; each page puts a table of the same numbers
// beside it for accessibility.

// Chart geometry (SVG user units).
const (
	chartH   = 160
	barWidth = 8 // each bar of a group
	groupGap = 6
)

// series is one kind of bar: its name (in the bars' titles) and colour.
type series struct {
	Name, Fill string
	Values     []int64 // one per group
}

// chartBar is one drawn bar.
type chartBar struct {
	X, Y, W, H int
	Fill       string
	Label      string // the bar's <title>
}

// chart is a laid-out bar chart.
type chart struct {
	ID, Title string // the svg's id; its accessible title
	W, H      int
	Max       int64
	Bars      []chartBar
}

// barChart lays out groups (labelled by labels) of one bar per series,
// scaled to the largest value (a non-zero value shows at least 1 unit; a
// zero value draws no bar).
func barChart(id, title string, labels []string, ss []series) chart {
	var top int64
	for _, s := range ss {
		for _, v := range s.Values {
			top = max(top, v)
		}
	}
	group := len(ss)*barWidth + groupGap
	c := chart{ID: id, Title: title, W: len(labels) * group, H: chartH, Max: top}
	for i, label := range labels {
		for j, s := range ss {
			h := scale(s.Values[i], top)
			if h == 0 {
				continue
			}
			c.Bars = append(c.Bars, chartBar{X: i*group + j*barWidth, Y: chartH - h, W: barWidth, H: h, Fill: s.Fill,
				Label: label + ": " + itoa64(s.Values[i]) + " " + s.Name})
		}
	}
	return c
}

// scale is n's bar height against max (a non-zero count shows at least 1).
func scale(n, max int64) int {
	if n <= 0 || max <= 0 {
		return 0
	}
	h := int(n * chartH / max)
	if h < 1 {
		h = 1
	}
	return h
}
