package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/errtrail/errtrail/groups"
	"github.com/errtrail/errtrail/incidents"
	"github.com/errtrail/errtrail/internal/tracelink"
	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/*.css
var staticFS embed.FS

// Config configures the pages.
type Config struct {
	// ExternalURL is where people reach errtrail, scheme, host and any path
	// prefix (https://errtrail.example.com/ops). Every link of the pages
	// starts with it; "" gives links relative to the host's root.
	ExternalURL string
	// GrafanaURL is the base URL of the Grafana that holds errtrail's
	// dashboards (https://grafana.example.com); "" shows no dashboard links.
	GrafanaURL string
	// TraceURL links a story to its trace (--links.trace-url, validated by
	// tracelink.Parse); the zero value shows no trace link.
	TraceURL tracelink.Template
	// Timeout bounds one lookup or report; default 15 s.
	Timeout time.Duration
	// Logger receives failures of the store (never an id); default
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock for default time ranges; default time.Now.
	Now func() time.Time
	// Incidents answers the incidents page; nil: it answers 503.
	Incidents incidents.Reader
	// Groups answers the groups pages; nil: they answer 503.
	Groups groups.Reader
}

// Default ranges of pages that take from and to.
const (
	DefaultListRange   = 24 * time.Hour
	DefaultReportRange = 7 * 24 * time.Hour
)

// contentSecurityPolicy allows nothing but this origin: no scripts at all
// (there are none), the stylesheet from /static/, forms posting here only.
const contentSecurityPolicy = "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

type handler struct {
	cfg   Config
	svc   lookup.Service
	rep   report.Reporter
	inc   incidents.Reader
	grp   groups.Reader
	pages map[string]*template.Template
	mux   *http.ServeMux
	links links
}

// New returns the pages' handler. svc answers the support pages, rep the
// report pages; either may be nil, and its pages then answer 503.
func New(cfg Config, svc lookup.Service, rep report.Reporter) http.Handler {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &handler{cfg: cfg, svc: svc, rep: rep, inc: cfg.Incidents, grp: cfg.Groups, links: newLinks(cfg.ExternalURL, cfg.GrafanaURL)}
	h.pages = parsePages(h.links)
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /{$}", h.home)
	h.mux.HandleFunc("GET /errors", h.errorsPage)
	h.mux.HandleFunc("GET /agents/{agent}/report", h.agentReport)
	h.mux.HandleFunc("GET /report", h.allReport)
	h.mux.HandleFunc("GET /incidents", h.incidentsPage)
	h.mux.HandleFunc("GET /agents/{agent}/groups", h.groupsPage)
	static, _ := fs.Sub(staticFS, "static")
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("/", h.notFoundPage)
	return h
}

// ServeHTTP sets the headers every answer carries and dispatches.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		h.render(w, r, http.StatusMethodNotAllowed, "message", messagePage{
			Title: "Method not allowed",
			Lines: []string{"These pages only answer GET requests. Use the form on the start page."},
		})
		return
	}
	// No redirects: http.ServeMux answers a path that is not in its
	// canonical form (//x, /a/../b) or a subtree without its slash
	// (/static) with a redirect whose Location repeats the path, and a
	// path can hold the id asked with. Such a path is no page.
	if !canonical(r.URL.Path) {
		h.notFoundPage(w, r)
		return
	}
	nr := &noRedirect{ResponseWriter: w}
	h.mux.ServeHTTP(nr, r)
	if nr.redirected {
		w.Header().Del("Location")
		h.notFoundPage(w, r)
	}
}

// noRedirect swallows a redirect of the mux (its status, Location and
// body) so that a 404 page can be written instead.
type noRedirect struct {
	http.ResponseWriter
	redirected bool
}

func (w *noRedirect) WriteHeader(code int) {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		w.redirected = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *noRedirect) Write(b []byte) (int, error) {
	if w.redirected {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// canonical reports whether p is a path as http.ServeMux leaves it.
func canonical(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// parsePages parses each page template together with the layout; a page
// that does not parse is a bug of this package, found by every test.
func parsePages(l links) map[string]*template.Template {
	funcs := l.funcs()
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t := template.Must(layout.Clone())
		pages[base] = template.Must(t.ParseFS(templateFS, n))
	}
	return pages
}

// page is what the layout needs besides the page's own data.
type page struct {
	Title string
	Form  form // the lookup form at the top of the page
	Data  any
}

// form is the lookup form's values: what the person typed, shown back only
// in the input fields.
type form struct {
	ID, Agent string
	Focus     bool // autofocus the id field (the start page)
}

// render writes one page with its status. The template is executed into a
// buffer first so that a template failure still gives a clean 500.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p any) {
	h.renderForm(w, r, status, name, form{}, p)
}

func (h *handler) renderForm(w http.ResponseWriter, r *http.Request, status int, name string, f form, data any) {
	t, ok := h.pages[name]
	if !ok {
		panic("web: no page " + name)
	}
	title := ""
	if tp, ok := data.(interface{ PageTitle() string }); ok {
		title = tp.PageTitle()
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", page{Title: title, Form: f, Data: data}); err != nil {
		h.cfg.Logger.Error("web: rendering a page failed", "page", name, "err", err)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("errtrail could not render this page.\n"))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// messagePage is a page of a few sentences (not found routes, 405, 500).
type messagePage struct {
	Title string
	Lines []string
	Retry bool
}

func (m messagePage) PageTitle() string { return m.Title }

func (h *handler) notFoundPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusNotFound, "message", messagePage{
		Title: "No such page",
		Lines: []string{"errtrail has no page at this address. Look an id up from the start page, or open a report."},
	})
}

func (h *handler) home(w http.ResponseWriter, r *http.Request) {
	h.renderForm(w, r, http.StatusOK, "home", form{Focus: true}, homePage{Kinds: searchedColumns})
}

type homePage struct{ Kinds []string }

func (homePage) PageTitle() string { return "Look up an error reply" }

// unavailable answers 503 with a page that says to retry and nothing about
// the cause; the cause goes to the log.
func (h *handler) unavailable(w http.ResponseWriter, r *http.Request, f form, what string, err error) {
	retry := 30 * time.Second
	var busy retryAfter
	if errors.As(err, &busy) { // a concurrency limit, not a failure
		retry = busy.RetryAfter()
		h.cfg.Logger.Info("web: too many requests at once", "what", what, "err", err)
	} else if err != nil {
		h.cfg.Logger.Warn("web: the error store is unavailable", "what", what, "err", err)
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(retry.Seconds())))))
	h.renderForm(w, r, http.StatusServiceUnavailable, "unavailable", f, unavailablePage{What: what})
}

type unavailablePage struct{ What string }

func (unavailablePage) PageTitle() string { return "Try again in a moment" }

// failed answers 500 for an error the service did not classify.
func (h *handler) failed(w http.ResponseWriter, r *http.Request, f form, err error) {
	h.cfg.Logger.Error("web: a lookup failed", "err", err)
	h.renderForm(w, r, http.StatusInternalServerError, "message", f, messagePage{
		Title: "Something went wrong",
		Lines: []string{"errtrail could not answer this request. The failure is logged; if it persists, tell the team that runs errtrail."},
		Retry: true,
	})
}

// retryAfter is an error that says when to ask again: the api's
// concurrency limits refuse with one.
type retryAfter interface {
	error
	RetryAfter() time.Duration
}

// isUnavailable tells a store that could not be asked from other failures:
// the service's own *UnavailableError, a timeout, a network error, a
// concurrency limit (retryAfter).
func isUnavailable(err error) bool {
	var ue *lookup.UnavailableError
	var ne net.Error
	var ra retryAfter
	return errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) || errors.As(err, &ra)
}
