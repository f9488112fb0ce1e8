package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// Palette gives each implementation a fixed colour, so charts of different
// runs read alike; others get grey.
var Palette = map[string]string{
	"zk-raw":       "#9e9e9e",
	"zklock":       "#1565c0",
	"go-zookeeper": "#2e7d32",
	"curator":      "#ef6c00",
	"kazoo":        "#6a1b9a",
	"etcd":         "#00838f",
	"redsync":      "#c62828",
}

// Chart layout, in pixels.
const (
	chartWidth = 920
	labelWidth = 230
	plotWidth  = 600
	barHeight  = 9
	barGap     = 2
	groupGap   = 12
	topMargin  = 84
	axisHeight = 40
)

// SVG renders acquisitions per second of every scenario as horizontal bars
// (median) with min–max whiskers on a logarithmic axis, grouped by scenario,
// with the raw ZooKeeper minimum as a dashed reference line. It is plain
// SVG 1.1 with no scripts or external resources, so GitHub shows it inline.
func SVG(run *Run) []byte {
	lo, hi := rateRange(run)
	x := func(v float64) float64 {
		v = math.Max(v, lo)
		return labelWidth + plotWidth*(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}
	var body bytes.Buffer
	y := float64(topMargin)
	for _, sc := range run.Scenarios {
		rs := resultsOf(run, sc.ID)
		if len(rs) == 0 {
			continue
		}
		h := float64(len(rs)*(barHeight+barGap)) - barGap
		fmt.Fprintf(&body, `<text x="%d" y="%.1f" text-anchor="end" class="g">%s</text>`+"\n",
			labelWidth-8, y+h/2+4, esc(sc.Title))
		for _, r := range rs {
			drawBar(&body, r, x, y)
			y += barHeight + barGap
		}
		y += groupGap
	}
	plotBottom := y - groupGap + 6
	var out bytes.Buffer
	height := plotBottom + axisHeight
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="sans-serif" font-size="11">`+"\n",
		chartWidth, height, chartWidth, height)
	out.WriteString(`<style>.g{font-weight:bold;fill:#222}.v{fill:#333;font-size:9px}.a{fill:#555;font-size:10px}</style>` + "\n")
	fmt.Fprintf(&out, `<rect width="%d" height="%.0f" fill="#fff"/>`+"\n", chartWidth, height)
	fmt.Fprintf(&out, `<text x="%d" y="18" font-size="14" class="g">%s</text>`+"\n", 10,
		esc(fmt.Sprintf("Lock acquisitions per second (log scale): median, min–max over %d repeats", run.Repeats)))
	fmt.Fprintf(&out, `<text x="%d" y="34" class="a">%s</text>`+"\n", 10, esc(run.Machine+", "+run.Date.UTC().Format("2006-01-02 15:04 MST")+", "+run.Mode+" run"))
	legend(&out, run)
	axis(&out, lo, hi, x, plotBottom)
	out.Write(body.Bytes())
	if raw := run.Find("uncontended", "zk-raw"); raw != nil && raw.Rate.N > 0 {
		rx := x(raw.Rate.Median)
		fmt.Fprintf(&out, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#c62828" stroke-dasharray="4 3"/>`+"\n", rx, topMargin-6, rx, plotBottom)
		fmt.Fprintf(&out, `<text x="%.1f" y="%d" class="a" text-anchor="middle">%s</text>`+"\n", rx, topMargin-12,
			esc("raw ZooKeeper minimum "+Num(raw.Rate.Median)+"/s"))
	}
	out.WriteString("</svg>\n")
	return out.Bytes()
}

func drawBar(b *bytes.Buffer, r Result, x func(float64) float64, y float64) {
	c := Palette[r.Impl]
	if c == "" {
		c = "#757575"
	}
	x0, xm := x(0), x(r.Rate.Median)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
		x0, y, math.Max(xm-x0, 1), barHeight, c, esc(fmt.Sprintf("%s: %s/s (%s–%s)", r.Impl, Num(r.Rate.Median), Num(r.Rate.Min), Num(r.Rate.Max))))
	mid := y + barHeight/2.0
	xl, xh := x(r.Rate.Min), x(r.Rate.Max)
	fmt.Fprintf(b, `<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="#000" stroke-width="1" fill="none"/>`+"\n",
		xl, mid, xh, xl, mid-3, mid+3, xh, mid-3, mid+3)
	label := Num(r.Rate.Median)
	if r.Violations > 0 || r.Errors > 0 {
		label += " (invalid: violations/errors)"
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" class="v">%s</text>`+"\n", math.Max(xh, xm)+4, y+barHeight-1, esc(label))
}

func legend(b *bytes.Buffer, run *Run) {
	lx := 10.0
	for _, im := range run.Impls {
		c := Palette[im]
		if c == "" {
			c = "#757575"
		}
		fmt.Fprintf(b, `<rect x="%.0f" y="42" width="10" height="10" fill="%s"/><text x="%.0f" y="51">%s</text>`+"\n", lx, c, lx+14, esc(im))
		lx += 14 + 7*float64(len(im)) + 16
	}
}

func axis(b *bytes.Buffer, lo, hi float64, x func(float64) float64, bottom float64) {
	for d := lo; d <= hi*1.0001; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := d * m
			if v > hi*1.0001 {
				break
			}
			xv := x(v)
			stroke := "#eee"
			if m == 1 {
				stroke = "#ccc"
			}
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", xv, topMargin-4, xv, bottom, stroke)
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" class="a">%s</text>`+"\n", xv, bottom+14, axisLabel(v))
		}
	}
	fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="middle" class="a">acquisitions per second (lock + empty critical section + unlock; summed over clients)</text>`+"\n",
		labelWidth+plotWidth/2, bottom+30)
}

func axisLabel(v float64) string {
	switch {
	case v >= 1e6:
		return strings.TrimSuffix(fmt.Sprintf("%gM", v/1e6), ".0")
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	default:
		return fmt.Sprintf("%g", v)
	}
}

// rateRange is the axis range: whole decades around every min and max.
func rateRange(run *Run) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range run.Results {
		if r.Rate.N == 0 {
			continue
		}
		if r.Rate.Min > 0 {
			lo = math.Min(lo, r.Rate.Min)
		}
		hi = math.Max(hi, r.Rate.Max)
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || hi <= 0 {
		return 1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// resultsOf returns scenario's results in the run's implementation order.
func resultsOf(run *Run, scenario string) []Result {
	var out []Result
	for _, im := range run.Impls {
		if r := run.Find(scenario, im); r != nil && r.Rate.N > 0 {
			out = append(out, *r)
		}
	}
	return out
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
