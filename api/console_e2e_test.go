package api

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds a Chromium to drive: INSIGHTD_CHROMIUM, else Debian's
// chromium (scripts/setup.sh installs it) or another Chrome on PATH.
func chromiumPath() string {
	if p := os.Getenv("INSIGHTD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless Chromium tab that records every console error
// and uncaught exception of the page.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
	shots  []string // directories screenshots go to
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("no Chromium binary: scripts/setup.sh installs Debian's chromium package (or set INSIGHTD_CHROMIUM)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1440, 900),
		chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{ctx: ctx, shots: []string{filepath.Join(t.TempDir(), "screenshots")}}
	if os.Getenv("INSIGHTD_CONSOLE_SCREENSHOTS") != "" {
		b.shots = append(b.shots, filepath.Join("console", "testdata", "screenshots"))
	}
	chromedp.ListenTarget(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
				for _, a := range ev.Args {
					msg += " " + string(a.Value) + a.Description
				}
				msg = "console." + string(ev.Type) + ":" + msg
			}
		case *runtime.EventExceptionThrown:
			msg = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError {
				msg = "log: " + ev.Entry.Text + " " + ev.Entry.URL
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errors = append(b.errors, msg)
			b.mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx, log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	for _, d := range b.shots {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// run runs actions, failing the test on an error or on any console error
// the page logged meanwhile.
func (b *browser) run(t *testing.T, what string, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		// What the page showed when it went wrong.
		var png []byte
		if chromedp.Run(b.ctx, chromedp.FullScreenshot(&png, 100)) == nil {
			os.WriteFile(filepath.Join(b.shots[0], "failure.png"), png, 0o644)
		}
		var errText string
		chromedp.Run(b.ctx, chromedp.Evaluate(`document.getElementById("error").textContent`, &errText))
		t.Fatalf("%s: %v (screenshot in %s, page error line %q)", what, err, b.shots[0], errText)
	}
	b.noErrors(t, what)
}

func (b *browser) noErrors(t *testing.T, what string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errors) > 0 {
		t.Fatalf("%s: the page logged errors:\n%s", what, strings.Join(b.errors, "\n"))
	}
}

// shot saves a full-page screenshot as name.png.
func (b *browser) shot(t *testing.T, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(b.ctx, chromedp.Sleep(150*time.Millisecond), chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	for _, d := range b.shots {
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// text reads an element's text.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	var s string
	b.run(t, "read "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// eval evaluates an expression and stores its value in out.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	b.run(t, "evaluate "+expr, chromedp.Evaluate(expr, out))
}

// clickPoint clicks a chart's data point (series, index) where ECharts
// drew it, as a person would.
func (b *browser) clickPoint(t *testing.T, chartSel string, series, index int) {
	t.Helper()
	var xy []float64
	b.eval(t, fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		const c = echarts.getInstanceByDom(el);
		const v = c.getOption().series[%d].data[%d];
		const p = c.convertToPixel({seriesIndex: %d}, [%d, typeof v === "object" ? v.value : v]);
		const r = el.getBoundingClientRect();
		return [r.left + p[0], r.top + p[1]];
	})()`, chartSel, series, index, series, index), &xy)
	b.run(t, "click a chart point", chromedp.MouseClickXY(xy[0], xy[1]))
}

// goTo shows a console route, the current page cleared first so waiting
// for the next page's elements cannot match the last one's.
func (b *browser) goTo(t *testing.T, hash, ready string) {
	t.Helper()
	b.run(t, "open "+hash,
		chromedp.Evaluate(fmt.Sprintf(`document.getElementById("main").replaceChildren(); location.hash = %q; 0`, hash), nil),
		chromedp.WaitVisible(ready, chromedp.ByQuery))
}

// count counts the elements a selector matches.
func (b *browser) count(t *testing.T, sel string) int {
	t.Helper()
	var n int
	b.eval(t, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)
	return n
}

// people waits for the people dialog's rows and answers how many it shows,
// then closes it.
func (b *browser) people(t *testing.T, shot string) int {
	t.Helper()
	b.run(t, "people dialog", chromedp.WaitVisible(`#people tr.person`, chromedp.ByQuery))
	n := b.count(t, `#people tr.person`)
	if shot != "" {
		b.shot(t, shot)
	}
	b.run(t, "close people", chromedp.Click(`#people .dialog-head button`, chromedp.ByQuery),
		chromedp.WaitNotVisible(`#people`, chromedp.ByQuery))
	return n
}

// chartData is the data ECharts holds for a chart's series, as JSON.
func (b *browser) chartData(t *testing.T, sel string) string {
	t.Helper()
	var s string
	b.eval(t, fmt.Sprintf(`JSON.stringify(echarts.getInstanceByDom(document.querySelector(%q)).getOption().series.map(s => s.data.map(d => typeof d === "object" ? d.value : d)))`, sel), &s)
	return s
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestConsoleEndToEndInChromium(t *testing.T) {
	b := newBrowser(t)
	d := newConsoleDemo(t)
	f, key, pid := d.f, d.key, d.project
	result := func(name string) any {
		t.Helper()
		st, out := call(t, f.h, "GET", fmt.Sprintf("/api/projects/%d/insights/%v/?refresh=true", pid, d.insights[name]["id"]), key, nil)
		if st != 200 {
			t.Fatalf("insight %s: %d %v", name, st, out)
		}
		return out["result"]
	}

	b.run(t, "open the console", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(`#login input[name=key]`, chromedp.ByQuery))
	b.shot(t, "login")
	b.run(t, "log in", chromedp.SendKeys(`#login input[name=key]`, key, chromedp.ByQuery), chromedp.Click(`#login button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#projects li.project`, chromedp.ByQuery))

	// The first page: a fresh load of / with the key in the tab's session.
	start := time.Now()
	b.run(t, "reload", chromedp.Navigate(d.url+"/"), chromedp.WaitVisible(`#projects li.project`, chromedp.ByQuery))
	firstPage := time.Since(start)
	t.Logf("first page (projects list visible) rendered in %v", firstPage.Round(time.Millisecond))
	if firstPage > time.Second {
		t.Errorf("the projects page took %v to render, want under 1s", firstPage)
	}
	if got := b.text(t, `#projects`); !strings.Contains(got, "Acme web") {
		t.Fatalf("projects page shows %q", got)
	}
	b.shot(t, "projects")

	t.Run("saved insights list and search", func(t *testing.T) {
		b.goTo(t, fmt.Sprintf("#/p/%d/insights", pid), `#insights tbody tr.insight`)
		if n := b.count(t, `#insights tbody tr.insight`); n != len(consoleInsights) {
			t.Fatalf("%d insights listed, want %d", n, len(consoleInsights))
		}
		b.shot(t, "insights")
		b.goTo(t, fmt.Sprintf("#/p/%d/insights?search=retention", pid), `#insights tbody tr.insight`)
		if n, got := b.count(t, `#insights tbody tr.insight`), b.text(t, `#insights tbody`); n != 1 || !strings.Contains(got, "Signup retention") {
			t.Fatalf("search for retention lists %d: %q", n, got)
		}
	})

	kinds := map[string]string{"Daily pageviews and signups": "lines", "Pageviews by browser, compared": "bars",
		"Purchases this month": "number", "Visit to purchase": "funnel", "Time from signup to purchase": "timing",
		"Signup retention": "retention", "Page paths": "paths", "Pageview lifecycle": "lifecycle", "Pageview stickiness": "stickiness"}
	for _, in := range consoleInsights {
		kind := kinds[in.name]
		t.Run("an insight drawn as "+kind, func(t *testing.T) {
			ready := fmt.Sprintf(`#insight-chart[data-kind=%q] canvas`, kind)
			switch kind {
			case "number":
				ready = `#insight-chart .bold-number`
			case "retention":
				ready = `#insight-chart table.retention`
			}
			b.goTo(t, fmt.Sprintf("#/p/%d/insights/%v", pid, d.insights[in.name]["id"]), ready)
			if got := b.text(t, `main h1`); got != in.name {
				t.Fatalf("title %q, want %q", got, in.name)
			}
			b.shot(t, "insight-"+kind)
			res := result(in.name)
			switch kind {
			case "lines", "bars", "lifecycle", "stickiness":
				var want []any
				for _, s := range res.([]any) {
					want = append(want, s.(map[string]any)["data"])
				}
				if got := b.chartData(t, `#insight-chart .chart`); got != asJSON(t, want) {
					t.Fatalf("chart holds %s, the API answers %s", got, asJSON(t, want))
				}
			case "timing":
				var want []any
				for _, bin := range res.(map[string]any)["bins"].([]any) {
					want = append(want, bin.([]any)[1])
				}
				if got := b.chartData(t, `#insight-chart .chart`); got != asJSON(t, []any{want}) {
					t.Fatalf("histogram holds %s, the API answers %v", got, want)
				}
			case "paths":
				var links int
				b.eval(t, `echarts.getInstanceByDom(document.querySelector("#insight-chart .chart")).getOption().series[0].links.length`, &links)
				if links != len(res.([]any)) || links == 0 {
					t.Fatalf("sankey has %d links, the API answers %d", links, len(res.([]any)))
				}
			case "number":
				var v float64
				b.eval(t, `Number(document.querySelector(".bold-number").dataset.value)`, &v)
				if want := res.([]any)[0].(map[string]any)["aggregated_value"]; v != want || v == 0 {
					t.Fatalf("number %v, the API answers %v", v, want)
				}
			case "funnel":
				steps := res.([]any)
				for i, s := range steps {
					got := b.text(t, fmt.Sprintf(`.funnel-steps tbody tr:nth-child(%d) td:nth-child(2)`, i+1))
					if want := fmt.Sprint(s.(map[string]any)["count"]); strings.ReplaceAll(got, ",", "") != want {
						t.Fatalf("step %d shows %q, the API answers %s", i+1, got, want)
					}
				}
			case "retention":
				want := len(res.([]any))
				if n := b.count(t, `table.retention tbody tr`); n != want {
					t.Fatalf("%d cohorts shown, the API answers %d", n, want)
				}
			}
		})
	}

	t.Run("the people behind a point, a step and a cell", func(t *testing.T) {
		b.goTo(t, fmt.Sprintf("#/p/%d/insights/%v", pid, d.insights["Daily pageviews and signups"]["id"]), `#insight-chart canvas`)
		signups := result("Daily pageviews and signups").([]any)[1].(map[string]any)["data"].([]any)
		idx := -1
		for i, v := range signups {
			if v.(float64) > 0 {
				idx = i
			}
		}
		if idx < 0 {
			t.Fatal("no day with signups in the demo")
		}
		b.clickPoint(t, `#insight-chart .chart`, 1, idx)
		if n := b.people(t, "people"); float64(n) != signups[idx].(float64) {
			t.Fatalf("the point's people dialog lists %d, the point says %v", n, signups[idx])
		}

		// A path's first link, clicked near its start where ECharts laid it out.
		b.goTo(t, fmt.Sprintf("#/p/%d/insights/%v", pid, d.insights["Page paths"]["id"]), `#insight-chart[data-kind=paths] canvas`)
		var edge []any
		b.eval(t, `(() => {
			const el = document.querySelector("#insight-chart .chart");
			const s = echarts.getInstanceByDom(el).getModel().getSeriesByIndex(0);
			const e = s.getGraph().getEdgeByIndex(0), n = e.node1.getLayout(), l = e.getLayout();
			const r = el.getBoundingClientRect();
			return [r.left + s.layoutInfo.x + n.x + n.dx + 6, r.top + s.layoutInfo.y + n.y + l.sy + l.dy / 2, e.node1.id, e.node2.id];
		})()`, &edge)
		b.run(t, "click a path link", chromedp.MouseClickXY(edge[0].(float64), edge[1].(float64)))
		// A link counts paths, and a person may walk it more than once: the
		// dialog lists the persons route's answer for the link.
		body := map[string]any{"path_start_key": edge[2], "path_end_key": edge[3]}
		for _, in := range consoleInsights {
			if in.name == "Page paths" {
				for k, v := range in.filters {
					body[k] = v
				}
			}
		}
		st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/persons/path/", pid), key, body)
		if st != 200 {
			t.Fatalf("path persons: %d %v", st, out)
		}
		want := len(out["results"].([]any)[0].(map[string]any)["people"].([]any))
		if n := b.people(t, "people-path"); n != want || n == 0 {
			t.Fatalf("the link's people dialog lists %d, the persons route %d", n, want)
		}

		b.goTo(t, fmt.Sprintf("#/p/%d/insights/%v", pid, d.insights["Visit to purchase"]["id"]), `.funnel-steps`)
		purchases := result("Visit to purchase").([]any)[2].(map[string]any)["count"].(float64)
		b.run(t, "click the last step", chromedp.Click(`.funnel-steps tbody tr:nth-child(3) td:nth-child(2) button`, chromedp.ByQuery))
		if n := b.people(t, ""); float64(n) != purchases {
			t.Fatalf("the step's people dialog lists %d, the step says %v", n, purchases)
		}

		b.goTo(t, fmt.Sprintf("#/p/%d/insights/%v", pid, d.insights["Signup retention"]["id"]), `table.retention`)
		cohort := result("Signup retention").([]any)[0].(map[string]any)["values"].([]any)[0].(map[string]any)["count"].(float64)
		b.run(t, "click a retention cell", chromedp.Click(`table.retention tbody tr:first-child td:nth-child(3) button`, chromedp.ByQuery))
		if n := b.people(t, ""); float64(n) != cohort || n == 0 {
			t.Fatalf("the cell's people dialog lists %d, the cell says %v", n, cohort)
		}
	})

	t.Run("a dashboard with its tiles", func(t *testing.T) {
		b.goTo(t, fmt.Sprintf("#/p/%d/dashboards", pid), `#dashboards li.dashboard a`)
		b.run(t, "open the dashboard", chromedp.Click(`#dashboards li.dashboard a`, chromedp.ByQuery),
			chromedp.WaitVisible(`#tiles section.tile`, chromedp.ByQuery))
		b.run(t, "tiles drawn", chromedp.Poll(`document.querySelectorAll("#tiles section.tile [data-kind]").length === 4`, nil,
			chromedp.WithPollingTimeout(10*time.Second)))
		if got := b.text(t, `main h1`); got != "Product overview" {
			t.Fatalf("dashboard title %q", got)
		}
		b.shot(t, "dashboard")
	})

	t.Run("an ad-hoc trend and funnel", func(t *testing.T) {
		b.goTo(t, fmt.Sprintf("#/p/%d/new", pid), `#builder select[name=event]`)
		b.run(t, "build a trend", chromedp.SetValue(`#builder select[name=event]`, "$pageview", chromedp.ByQuery),
			chromedp.SetValue(`#builder select[name=breakdown]`, "$browser", chromedp.ByQuery),
			chromedp.Click(`#builder button[type=submit]`, chromedp.ByQuery),
			chromedp.WaitVisible(`#builder-result[data-kind=lines] canvas`, chromedp.ByQuery))
		st, out := call(t, f.h, "POST", fmt.Sprintf("/api/projects/%d/insights/trend/", pid), key, map[string]any{
			"insight": "TRENDS", "date_from": "-14d", "interval": "day", "display": "ActionsLineGraph", "breakdown": "$browser",
			"breakdown_type": "event", "events": []any{map[string]any{"id": "$pageview", "type": "events", "order": 0, "math": "total"}}})
		if st != 200 {
			t.Fatalf("trend: %d %v", st, out)
		}
		var want []any
		for _, s := range out["result"].([]any) {
			want = append(want, s.(map[string]any)["data"])
		}
		if got := b.chartData(t, `#builder-result .chart`); got != asJSON(t, want) || len(want) < 2 {
			t.Fatalf("built trend holds %s, the API answers %s", got, asJSON(t, want))
		}
		b.shot(t, "builder-trend")
		b.clickPoint(t, `#builder-result .chart`, 0, len(want[0].([]any))-2)
		if n := b.people(t, ""); n == 0 {
			t.Fatal("no people behind the built trend's point")
		}

		b.goTo(t, fmt.Sprintf("#/p/%d/new?kind=funnel", pid), `#builder select[name=event]`)
		b.run(t, "build a funnel", chromedp.SetValue(`#series .builder-row:nth-child(2) select[name=event]`, "signup", chromedp.ByQuery),
			chromedp.Click(`#builder button[type=submit]`, chromedp.ByQuery),
			chromedp.WaitVisible(`#builder-result[data-kind=funnel] .funnel-steps`, chromedp.ByQuery))
		if got := b.text(t, `.funnel-steps tbody tr:nth-child(2) td:nth-child(1)`); !strings.Contains(got, "signup") {
			t.Fatalf("funnel's second step is %q", got)
		}
		b.shot(t, "builder-funnel")
	})

	t.Run("errors are shown as the API words them", func(t *testing.T) {
		// The 404 is logged by the browser as a failed load: no error check here.
		var got string
		if err := chromedp.Run(b.ctx, chromedp.Evaluate(fmt.Sprintf(`location.hash = "#/p/%d/insights/999999"; 0`, pid), nil),
			chromedp.WaitVisible(`#error`, chromedp.ByQuery), chromedp.Text(`#error`, &got, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		_, body := call(t, f.h, "GET", fmt.Sprintf("/api/projects/%d/insights/999999/", pid), key, nil)
		if !strings.Contains(got, body["detail"].(string)) || !strings.Contains(got, "not_found") {
			t.Fatalf("error line %q, the API said %v", got, body)
		}
	})
}
