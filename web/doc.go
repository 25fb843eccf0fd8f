// Package web serves errtrail's pages for people: the support page, where a
// support engineer pastes the id from a customer ticket and reads the story
// of that error reply, the list of a caller's recent errors on an agent, and
// an agent's conformance report for its team.
//
// New returns one http.Handler for everything outside the JSON API (which
// is mounted next to it under /v1/):
//
//	GET /                               the lookup form
//	GET /errors?id=ID[&agent=A][&event_id=E]
//	                                    the story of one error reply (lookup.Service.Story)
//	GET /errors?agent=A&caller=C&kind=K[&from=&to=&cursor=]
//	                                    recent errors, newest first (lookup.Service.List)
//	GET /agents/{agent}/report[?from=&to=]
//	GET /report[?from=&to=]             the conformance report (report.Reporter)
//	GET /incidents[?agent=A&kind=K&from=&to=]
//	                                    the alerter's episodes as a timeline (SVG) and a table (incidents.Reader)
//	GET /static/style.css               the one stylesheet
//
// The pages are rendered on the server with html/template from templates/
// and need no JavaScript, fonts or images; everything is embedded in the
// binary, so the pages work offline, in a text browser and under a
// Content-Security-Policy of default-src 'self'. Their charts are inline
// SVG written by the server: chart.go lays out counts per step (the
// story's context per minute, the report's rules over time, drawn by the
// "chart" template of layout.html), timeline.go the incidents; templates
// only write numbers out and colours come from the stylesheet by class, so
// no inline style is needed either. A chart only repeats numbers the table
// next to it holds, and holds no id or message of a record.
//
// # Ids are customer data
//
// An id a person looks up may be a customer value (an e-mail address used
// as a request id, say). The handler never logs query strings, and a page
// shows the id only as the value of the form's input field, where the
// person typed it; not-found, bad-id and unavailable pages say which kinds
// of id were searched, never the id. Links to one record of several use its
// event_id, errtrail's own id, never the id that was typed.
//
// The form is a GET form, on purpose: a story's address is what alerts,
// dashboards and colleagues link to, the back button and reload work, and
// there is no resubmission prompt. POST followed by a 303 redirect would
// only help if the redirect target did not carry the id, which needs state
// on the server (a session or a stored search) that errtrail does not have.
// What GET costs is the id in the browser's history and in the address bar;
// what it does not cost: Referrer-Policy no-referrer keeps it out of the
// Referer header of links to Grafana and elsewhere, Cache-Control no-store
// out of caches, and the handler out of logs. A reverse proxy in front of
// errtrail must be told not to log query strings either.
//
// No page answers with a redirect: a path that is not in canonical form
// (//x, /a/../b) or a subtree without its slash is a 404, since a
// redirect's Location would repeat the path. The next page of a list links
// with its cursor only: the cursor holds the list's range.
//
// # Deep links
//
// StoryURL, ListURL and ReportURL build the addresses alert annotations and
// dashboards link to, from Config.ExternalURL; the pages build their own
// links the same way, so a deployment behind a path prefix works.
package web
