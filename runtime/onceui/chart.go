package onceui

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// chart draws one of the overview's per-day counts (value) as SVG bars, on the server: one
// bar per day of the window (at most 60), scaled to the busiest day, labelled label. It
// writes only numbers, dates and label (a constant of the console's) into the markup, so it
// is safe to mark as HTML.
func chart(days []dayCount, window time.Duration, label string, value func(dayCount) int64) template.HTML {
	n := int(window / (24 * time.Hour))
	if n < 1 {
		n = 1
	}
	if n > 60 {
		n = 60
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	counts := make([]int64, n)
	var max int64 = 1
	for _, d := range days {
		i := n - 1 - int(today.Sub(d.Day.UTC().Truncate(24*time.Hour))/(24*time.Hour))
		if i >= 0 && i < n {
			counts[i] += value(d)
			if counts[i] > max {
				max = counts[i]
			}
		}
	}
	const w, h, bottom = 600, 140, 20
	bw := float64(w) / float64(n)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">`, w, h+bottom, label)
	for i, c := range counts {
		bh := float64(h) * float64(c) / float64(max)
		day := today.AddDate(0, 0, i-n+1)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d</title></rect>`,
			float64(i)*bw+1, float64(h)-bh, bw-2, bh, day.Format("2006-01-02"), c)
		if n <= 14 || i%(n/7) == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`, float64(i)*bw+bw/2, h+14, day.Format("01-02"))
		}
	}
	fmt.Fprintf(&b, `<text class="max" x="2" y="12">%d</text></svg>`, max)
	return template.HTML(b.String())
}
