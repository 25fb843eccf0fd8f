package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// corpusTemplate is a real captured reply (parse/testdata/corpus/) used as
// the template of an agent's error replies. Three capture forms are read,
// told apart by their first bytes as in the event contract: an event JSON
// (its reply member is used), a raw HTTP/1.1 response, or a gRPC reply text
// form. Each produced reply is the capture with its ids and delays replaced:
// in a JSON body the members id (top level), request_id, error_id,
// messageId, taskId, retryDelay, retry_after_ms and QuotaFailure subjects;
// in headers Retry-After, X-Request-Id and RateLimit's t=. Everything else,
// including the status and the reason, is sent as captured, so a capture of
// a quota reply should back an agent's quota faults and so on.
type corpusTemplate struct {
	path       string
	binding    string
	status     int
	headers    [][2]string
	body       []byte
	bodyJSON   any // parsed body, nil when the body is not JSON
	grpcStatus int
	grpcMsg    string
	trailers   [][2]string
}

func loadCorpusTemplate(name, dir string) (*corpusTemplate, error) {
	path := name
	if !filepath.IsAbs(name) {
		path = filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			if root := moduleRoot(dir); root != "" {
				for _, p := range []string{filepath.Join(root, name), filepath.Join(root, "parse", "testdata", "corpus", name)} {
					if _, err := os.Stat(p); err == nil {
						path = p
						break
					}
				}
			}
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("corpus template: %w", err)
	}
	t, err := parseCorpus(raw)
	if err != nil {
		return nil, fmt.Errorf("corpus template %s: %w", path, err)
	}
	t.path = path
	return t, nil
}

func moduleRoot(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return ""
		}
		d = p
	}
}

func parseCorpus(raw []byte) (*corpusTemplate, error) {
	t := &corpusTemplate{}
	switch {
	case bytes.HasPrefix(raw, []byte("{")):
		var ev struct {
			Reply struct {
				Binding    string            `json:"binding"`
				HTTPStatus int               `json:"http_status"`
				Headers    map[string]string `json:"headers"`
				Body       *string           `json:"body"`
				BodyJSON   json.RawMessage   `json:"body_json"`
				BodyB64    []byte            `json:"body_base64"`
				GRPC       *struct {
					Status   int               `json:"status"`
					Message  string            `json:"message"`
					Trailers map[string]string `json:"trailers"`
				} `json:"grpc"`
			} `json:"reply"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, err
		}
		r := ev.Reply
		t.binding, t.status = r.Binding, r.HTTPStatus
		for k, v := range r.Headers {
			t.headers = append(t.headers, [2]string{k, v})
		}
		switch {
		case r.Body != nil:
			t.body = []byte(*r.Body)
		case len(r.BodyJSON) > 0:
			t.body = r.BodyJSON
		default:
			t.body = r.BodyB64
		}
		if r.GRPC != nil {
			t.binding, t.grpcStatus, t.grpcMsg = "grpc", r.GRPC.Status, r.GRPC.Message
			for k, v := range r.GRPC.Trailers {
				t.trailers = append(t.trailers, [2]string{k, v})
			}
		}
	case bytes.HasPrefix(raw, []byte("HTTP/1.")):
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		t.status = resp.StatusCode
		for k, vs := range resp.Header {
			for _, v := range vs {
				t.headers = append(t.headers, [2]string{k, v})
			}
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(resp.Body); err != nil {
			return nil, err
		}
		t.body = buf.Bytes()
		t.binding = "http"
		if bytes.Contains(t.body, []byte(`"jsonrpc"`)) {
			t.binding = "jsonrpc"
		}
	case bytes.HasPrefix(raw, []byte("GRPC")):
		t.binding = "grpc"
		t.grpcStatus = -1
		lines := strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n")
		for _, l := range lines[1:] {
			if l == "" {
				break
			}
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				return nil, fmt.Errorf("gRPC text form: bad line %q", l)
			}
			k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
			switch k {
			case "grpc-status":
				t.grpcStatus, _ = strconv.Atoi(v)
			case "grpc-message":
				t.grpcMsg = v
			}
			if strings.HasPrefix(k, "grpc-") {
				t.trailers = append(t.trailers, [2]string{k, v})
			} else {
				t.headers = append(t.headers, [2]string{k, v})
			}
		}
		if t.grpcStatus < 0 {
			return nil, fmt.Errorf("gRPC text form without grpc-status")
		}
	default:
		return nil, fmt.Errorf("not an event JSON, raw HTTP/1.1 response or gRPC text form")
	}
	if t.binding == "" {
		t.binding = "http"
	}
	if len(t.body) > 0 {
		var v any
		if json.Unmarshal(t.body, &v) == nil {
			t.bodyJSON = v
		}
	}
	return t, nil
}

func (t *corpusTemplate) render(q *request, r *rejection) reply {
	delay := r.delay
	if delay < 1 {
		delay = 1
	}
	out := reply{binding: t.binding, status: t.status, body: t.body,
		grpcStatus: t.grpcStatus, grpcMessage: t.grpcMsg, grpcTrailers: t.trailers}
	for _, kv := range t.headers {
		switch strings.ToLower(kv[0]) {
		case "retry-after":
			kv[1] = strconv.Itoa(delay)
		case "x-request-id":
			kv[1] = q.httpReqID
		case "ratelimit":
			if i := strings.Index(kv[1], "t="); i >= 0 {
				kv[1] = kv[1][:i] + "t=" + strconv.Itoa(delay)
			}
		}
		out.headers = append(out.headers, kv)
	}
	if t.bodyJSON != nil {
		v := substitute(t.bodyJSON, q, r, delay, 0)
		if b, err := json.Marshal(v); err == nil {
			out.body = b
		}
	}
	return out
}

// substitute returns a copy of v with the request's ids and the rejection's
// delay in place of the captured ones.
func substitute(v any, q *request, r *rejection, delay, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			switch {
			case k == "id" && depth == 0:
				m[k] = q.jsonrpcID
			case k == "request_id":
				m[k] = q.httpReqID
			case k == "error_id":
				m[k] = r.errorID
			case k == "messageId":
				m[k] = q.messageID
			case k == "taskId" && q.taskID != "":
				m[k] = q.taskID
			case k == "retryDelay":
				m[k] = strconv.Itoa(delay) + "s"
			case k == "retry_after_ms":
				m[k] = delay * 1000
			case k == "created_at":
				m[k] = r.at.UTC().Format(time.RFC3339)
			case k == "subject":
				if s, ok := e.(string); ok && strings.HasPrefix(s, "caller:") {
					m[k] = "caller:" + q.caller
				} else {
					m[k] = e
				}
			default:
				m[k] = substitute(e, q, r, delay, depth+1)
			}
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = substitute(e, q, r, delay, depth+1)
		}
		return s
	default:
		return v
	}
}
