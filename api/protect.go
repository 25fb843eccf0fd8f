package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/errtrail/errtrail/lookup"
	"github.com/errtrail/errtrail/report"
)

// Services returns the lookup service and the reporter behind the api's
// gates (Config.Lookups, Lists, Reports): what another front end on the
// same process (errtrail mcp) asks, so that it holds no more of the store
// than the api's own routes may. The gates count a request's client by the
// key Protect puts in its context; a context without one is one client.
func (s *Server) Services() (lookup.Service, report.Reporter) { return s.svc, s.rep }

// Protect returns h, a handler that is no route of the api (errtrail mcp's
// Streamable HTTP endpoint), behind the checks every /v1/ request passes:
// a body of at most maxBody bytes (413 beyond), the per-client rate limit
// (429 with Retry-After), and, when Config.TokenFile or TokensEnv enables
// auth, an accepted bearer token (401 with WWW-Authenticate, before h is
// asked anything). Any method reaches h. The client's key goes into the
// request's context for the gates of Services. Requests are counted,
// timed and logged under the route label given, never their path.
func (s *Server) Protect(label string, maxBody int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(hw http.ResponseWriter, hr *http.Request) {
		start := time.Now()
		s.m.inFlight.Inc()
		defer s.m.inFlight.Dec()
		w := &recorder{ResponseWriter: hw}
		hdr := w.Header()
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("Cache-Control", "no-store")
		client := s.clientKey(hr)
		defer func() {
			status := w.status
			if status == 0 {
				status = http.StatusOK
			}
			d := time.Since(start)
			s.m.requests.WithLabelValues(label, strconv.Itoa(status)).Inc()
			s.m.duration.WithLabelValues(label).Observe(d.Seconds())
			s.log.Info("request", "route", label, "method", methodLabel(hr.Method), "status", status,
				"duration", d, "bytes", w.bytes, "client", client.log)
		}()
		if s.limiter != nil {
			if ok, wait := s.limiter.allow(client.limit, s.now()); !ok {
				s.m.rateLimited.WithLabelValues(label).Inc()
				hdr.Set("Retry-After", strconv.Itoa(retryAfter(wait)))
				writeProblem(w, probRateLimited.body())
				return
			}
		}
		if s.tokens != nil && !client.authed {
			reason := "invalid"
			if !client.presented {
				reason = "missing"
			}
			s.m.authFailed.WithLabelValues(reason).Inc()
			hdr.Set("WWW-Authenticate", `Bearer realm="errtrail"`)
			writeProblem(w, probUnauthorized.body())
			return
		}
		if hr.ContentLength > maxBody {
			writeProblem(w, probBodyTooLarge.body())
			return
		}
		hr.Body = http.MaxBytesReader(w, hr.Body, maxBody)
		hr = hr.WithContext(context.WithValue(hr.Context(), clientCtxKey{}, client.limit))
		h.ServeHTTP(w, hr)
	})
}
