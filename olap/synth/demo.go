package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/insightd/insightd/olap"
)

// DemoConfig sizes a demo product.
type DemoConfig struct {
	Team    int64
	Persons int
	Days    int
	Seed    uint64
	// End is when the simulated period ends (default: now, to the second).
	// The same seed and end give the same events, uuids included.
	End time.Time
	// Progress, when set, is told after each write, and after every
	// hundredth of the visitors, how many visitors of Persons have been
	// simulated and how many events are stored.
	Progress func(visitors, events int)
}

// Validate reports a configuration that cannot work.
func (c DemoConfig) Validate() error {
	var errs []error
	if c.Team <= 0 {
		errs = append(errs, errors.New("project id must be positive"))
	}
	if c.Persons < 1 || c.Persons > 10_000_000 {
		errs = append(errs, fmt.Errorf("persons must be 1..10000000, got %d", c.Persons))
	}
	if c.Days < 1 || c.Days > 3650 {
		errs = append(errs, fmt.Errorf("days must be 1..3650, got %d", c.Days))
	}
	return errors.Join(errs...)
}

// DemoStats says what a demo run wrote: persons with events, $identify
// (sign-up) events, purchases and all events.
type DemoStats struct {
	Persons   int `json:"persons"`
	Signups   int `json:"signups"`
	Purchases int `json:"purchases"`
	Events    int `json:"events"`
}

// demoChunk is how many events go to the writer at once.
const demoChunk = 5000

// Demo simulates a small SaaS product ("Hedgebox") and writes its events
// through the writer, as if its SDKs had sent them: anonymous visitors
// arrive from search, social or newsletters, browse pages in sessions,
// click around ($autocapture), some sign up ($identify merges their
// anonymous browsing into the identified person, with $set and
// $set_once person properties and a company group), use the app in later
// sessions, and some buy a plan (purchase with amount). Every visitor's
// story comes from its own random stream, so the output depends only on
// the seed and the end time; event uuids are part of it, so running the
// same demo twice stores nothing twice.
func Demo(ctx context.Context, w *olap.Writer, cfg DemoConfig) (DemoStats, error) {
	var st DemoStats
	if err := cfg.Validate(); err != nil {
		return st, err
	}
	if cfg.End.IsZero() {
		cfg.End = time.Now().UTC().Truncate(time.Second)
	}
	start := cfg.End.Add(-time.Duration(cfg.Days) * 24 * time.Hour)
	buf := make([]olap.Capture, 0, demoChunk+64)
	flush := func(visitors int) error {
		if len(buf) > 0 {
			if res := w.Write(ctx, buf); res.Err != nil {
				return res.Err
			}
			st.Events += len(buf)
			buf = buf[:0]
		}
		if cfg.Progress != nil {
			cfg.Progress(visitors, st.Events)
		}
		return nil
	}
	for v := range cfg.Persons {
		n := len(buf)
		buf = newVisitor(cfg, v, start).story(buf)
		if len(buf) > n {
			st.Persons++ // a visitor arriving after the end has no events
		}
		for _, c := range buf[n:] {
			switch c.Event.Event {
			case "$identify":
				st.Signups++
			case "purchase":
				st.Purchases++
			}
		}
		if len(buf) >= demoChunk {
			if err := flush(v + 1); err != nil {
				return st, err
			}
		} else if cfg.Progress != nil && (v+1)%max(cfg.Persons/100, 1) == 0 {
			cfg.Progress(v+1, st.Events)
		}
	}
	return st, flush(cfg.Persons)
}

type visitor struct {
	rng        *rand.Rand
	team       int64
	start, end time.Time
	distinctID string
	anon       string
	email      string
	company    string
	device     device
	source     source
	purchases  int
	sessionID  string
	now        time.Time
	out        []olap.Capture
}

type device struct{ kind, os, browser string }

type source struct{ referrer, domain, utm string }

var (
	devices = []weighted[device]{
		{28, device{"Desktop", "Mac OS X", "Chrome"}}, {9, device{"Desktop", "Mac OS X", "Safari"}},
		{22, device{"Desktop", "Windows", "Chrome"}}, {6, device{"Desktop", "Windows", "Edge"}},
		{5, device{"Desktop", "Windows", "Firefox"}}, {3, device{"Desktop", "Linux", "Firefox"}},
		{14, device{"Mobile", "iOS", "Mobile Safari"}}, {10, device{"Mobile", "Android", "Chrome"}},
		{3, device{"Tablet", "iOS", "Mobile Safari"}},
	}
	sources = []weighted[source]{
		{40, source{"https://www.google.com/", "www.google.com", ""}},
		{25, source{"$direct", "$direct", ""}},
		{10, source{"https://t.co/", "t.co", "twitter"}},
		{10, source{"https://mail.example.com/", "mail.example.com", "newsletter"}},
		{8, source{"https://www.bing.com/", "www.bing.com", ""}},
		{7, source{"https://www.producthunt.com/", "www.producthunt.com", "producthunt"}},
	}
	landings  = []weighted[string]{{50, "/"}, {25, "/blog/why-hedgehogs"}, {15, "/pricing"}, {10, "/features"}}
	sitePages = []string{"/", "/pricing", "/features", "/blog", "/blog/why-hedgehogs", "/blog/release-2-0", "/docs", "/about"}
	appPages  = []string{"/files", "/files/shared", "/settings", "/team", "/billing"}
	appEvents = []string{"uploaded_file", "shared_file", "downloaded_file", "invited_teammate"}
	plans     = []weighted[float64]{{50, 9.99}, {35, 19.99}, {15, 49.99}}
	firstName = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Margaret", "Dennis", "Frances", "Linus"}
	companies = []string{"acme.test", "globex.test", "initech.test", "umbrella.test", "hooli.test", "piedpiper.test", "vandelay.test", "wayne.test"}
)

type weighted[T any] struct {
	w int
	v T
}

func pick[T any](rng *rand.Rand, ws []weighted[T]) T {
	total := 0
	for _, x := range ws {
		total += x.w
	}
	n := rng.IntN(total)
	for _, x := range ws {
		if n < x.w {
			return x.v
		}
		n -= x.w
	}
	return ws[len(ws)-1].v
}

func newVisitor(cfg DemoConfig, v int, start time.Time) *visitor {
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(v)+1))
	vis := &visitor{rng: rng, team: cfg.Team, start: start, end: cfg.End}
	vis.anon = fmt.Sprintf("%016x-%04x", rng.Uint64(), v&0xffff)
	vis.distinctID = vis.anon
	vis.device = pick(rng, devices)
	vis.source = pick(rng, sources)
	// Arrivals grow over the period, as a product's traffic does.
	day := cfg.Days - 1 - int(math.Floor(float64(cfg.Days)*math.Pow(rng.Float64(), 1.4)))
	vis.now = start.Add(time.Duration(max(day, 0))*24*time.Hour + businessHour(rng))
	return vis
}

// businessHour is a time of day that favours working hours.
func businessHour(rng *rand.Rand) time.Duration {
	h := 9 + rng.NormFloat64()*3.5
	h = math.Mod(math.Mod(h, 24)+24, 24)
	return time.Duration(h * float64(time.Hour))
}

// story appends the visitor's events, in time order, to out.
func (vis *visitor) story(out []olap.Capture) []olap.Capture {
	vis.out = out
	rng := vis.rng
	sessions := 1
	for sessions < 12 && rng.Float64() < 0.55 {
		sessions++
	}
	signupAt := -1
	if rng.Float64() < 0.35 {
		signupAt = rng.IntN(min(sessions, 3))
	}
	for s := range sessions {
		if vis.now.After(vis.end) {
			break
		}
		vis.session(s == 0, s == signupAt)
		// Next visit: hours to days later.
		vis.now = vis.now.Add(time.Duration(rng.ExpFloat64()*60*float64(time.Hour)) + time.Hour)
	}
	return vis.out
}

func (vis *visitor) session(first, signup bool) {
	rng := vis.rng
	vis.sessionID = vis.uuid().String()
	if vis.email != "" {
		vis.appSession()
		return
	}
	page := pick(rng, landings)
	pages := 1 + rng.IntN(5)
	for i := range pages {
		props := vis.pageProps(page)
		if i == 0 && first {
			props["$referrer"], props["$referring_domain"] = vis.source.referrer, vis.source.domain
			if vis.source.utm != "" {
				props["utm_source"] = vis.source.utm
			}
			props["$set_once"] = map[string]any{"$initial_referring_domain": vis.source.domain,
				"$initial_pathname": page, "$initial_browser": vis.device.browser}
		}
		vis.emit("$pageview", props)
		if rng.Float64() < 0.4 {
			vis.click(page)
		}
		page = sitePages[rng.IntN(len(sitePages))]
	}
	if signup {
		vis.signup()
	}
}

func (vis *visitor) signup() {
	rng := vis.rng
	vis.emit("$pageview", vis.pageProps("/signup"))
	name := firstName[rng.IntN(len(firstName))]
	vis.company = companies[rng.IntN(len(companies))]
	domain := vis.company
	if rng.Float64() < 0.03 {
		domain = "insightd.test" // the team's own test accounts
	}
	vis.email = fmt.Sprintf("%s.%d@%s", name, rng.IntN(1_000_000), domain)
	vis.distinctID = vis.email
	vis.emit("$identify", map[string]any{"$anon_distinct_id": vis.anon,
		"$set": map[string]any{"email": vis.email, "name": name, "plan": "free", "company": vis.company}})
	vis.emit("signup", map[string]any{"plan": "free", "source": vis.source.domain, "$group_0": vis.company,
		"$groups": map[string]any{"company": vis.company}})
}

func (vis *visitor) appSession() {
	rng := vis.rng
	for range 1 + rng.IntN(6) {
		page := appPages[rng.IntN(len(appPages))]
		props := vis.pageProps("/app" + page)
		props["$group_0"] = vis.company
		vis.emit("$pageview", props)
		if rng.Float64() < 0.5 {
			vis.emit(appEvents[rng.IntN(len(appEvents))], map[string]any{"$session_id": vis.sessionID,
				"$group_0": vis.company, "file_size_kb": 1 + rng.IntN(50_000)})
		}
	}
	if vis.purchases == 0 && rng.Float64() < 0.3 {
		amount := pick(rng, plans)
		vis.purchases++
		vis.emit("purchase", map[string]any{"amount": amount, "currency": "USD", "plan": "pro",
			"$session_id": vis.sessionID, "$group_0": vis.company, "$set": map[string]any{"plan": "pro"}})
	}
}

func (vis *visitor) click(page string) {
	text := []string{"Get started", "Pricing", "Learn more", "Sign up", "Docs"}[vis.rng.IntN(5)]
	props := vis.pageProps(page)
	props["$event_type"], props["$el_text"] = "click", text
	props["$elements_chain"] = `a.button:text="` + text + `"nth-child="1"nth-of-type="1"`
	vis.emit("$autocapture", props)
}

func (vis *visitor) pageProps(path string) map[string]any {
	p := map[string]any{
		"$current_url": "https://hedgebox.test" + path, "$host": "hedgebox.test", "$pathname": path,
		"$browser": vis.device.browser, "$os": vis.device.os, "$device_type": vis.device.kind,
		"$session_id": vis.sessionID, "$lib": "web", "$lib_version": "1.150.0",
	}
	if vis.device.kind == "Desktop" {
		p["$screen_width"], p["$screen_height"] = 1920, 1080
	} else {
		p["$screen_width"], p["$screen_height"] = 390, 844
	}
	return p
}

// emit adds an event a little after the previous one.
func (vis *visitor) emit(event string, props map[string]any) {
	vis.now = vis.now.Add(time.Duration(5+vis.rng.IntN(90)) * time.Second)
	if vis.now.After(vis.end) {
		return
	}
	b, err := json.Marshal(props)
	if err != nil {
		panic(err) // maps of strings and numbers always encode
	}
	c := olap.Capture{Event: olap.Event{UUID: vis.uuid(), TeamID: vis.team, Event: event, DistinctID: vis.distinctID,
		Timestamp: vis.now.Truncate(time.Microsecond), Properties: string(b)}, ClientUUID: true}
	c.Person = personUpdate(event, props, vis.anon)
	vis.out = append(vis.out, c)
}

// personUpdate is what capture would read out of these properties.
func personUpdate(event string, props map[string]any, anon string) *olap.PersonUpdate {
	var u olap.PersonUpdate
	conv := func(m any) map[string]json.RawMessage {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		out := make(map[string]json.RawMessage, len(mm))
		for k, v := range mm {
			b, _ := json.Marshal(v)
			out[k] = b
		}
		return out
	}
	u.Set, u.SetOnce = conv(props["$set"]), conv(props["$set_once"])
	if event == "$identify" {
		u.Identify, u.Link, u.LinkKind = true, anon, olap.LinkIdentify
	}
	if u.Set == nil && u.SetOnce == nil && !u.Identify {
		return nil
	}
	return &u
}

// uuid is the next event id from the visitor's stream: a version 4 UUID
// that the seed reproduces.
func (vis *visitor) uuid() uuid.UUID {
	var id uuid.UUID
	hi, lo := vis.rng.Uint64(), vis.rng.Uint64()
	for i := range 8 {
		id[i], id[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}
