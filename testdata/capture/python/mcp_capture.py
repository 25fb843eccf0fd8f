#!/usr/bin/env python3
"""Captures error replies of MCP servers built with the official Python and
TypeScript SDKs over streamable HTTP, in JSON-response mode and SSE mode,
into parse/testdata/corpus/mcp-python/ and mcp-typescript/.

    python3 mcp_capture.py --out ../../../parse/testdata/corpus [--only mcp-python,mcp-typescript]

Standard library only: the servers run in their own environments
(python/.venv-mcp from requirements-mcp.txt, js/mcp/node_modules from its
package-lock.json; `testdata/capture/run` installs both). Each request is
written to a plain TCP socket with `Connection: close` and every byte read
until the server closes is stored as `<case>.http`, the request as
`<case>.req`, exactly as the Go harness does for the other SDKs
(go/cmd/capture/wire.go), with one row per case in cases.tsv.
"""
import argparse
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURE = os.path.dirname(HERE)
MCP_VERSION = '2025-11-25'
PATH = '/mcp'


def http_request(method, addr, path, headers, body):
    out = f'{method} {path} HTTP/1.1\r\nHost: {addr}\r\n'
    for k, v in headers:
        out += f'{k}: {v}\r\n'
    if body is not None or method == 'POST':
        out += f'Content-Length: {len(body or b"")}\r\n'
    out += 'Connection: close\r\n\r\n'
    return out.encode() + (body or b'')


def raw_http(addr, req, timeout=20.0):
    host, port = addr.rsplit(':', 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.settimeout(timeout)
        s.sendall(req)
        chunks = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                b = s.recv(65536)
            except socket.timeout:
                break
            if not b:
                break
            chunks.append(b)
        return b''.join(chunks)


def jrpc(id_, method, params):
    return json.dumps({'jsonrpc': '2.0', 'id': id_, 'method': method, 'params': params}, separators=(',', ':')).encode()


def call(name, args):
    return {'name': name, 'arguments': args}


def mcp_headers(session='', version=''):
    h = [('Content-Type', 'application/json'), ('Accept', 'application/json, text/event-stream')]
    if session:
        h.append(('Mcp-Session-Id', session))
    if version:
        h.append(('MCP-Protocol-Version', version))
    return h


def header_value(resp, name):
    head = resp.split(b'\r\n\r\n', 1)[0].decode('latin-1')
    for line in head.split('\r\n')[1:]:
        k, _, v = line.partition(':')
        if k.strip().lower() == name.lower():
            return v.strip()
    return ''


CASES_HEADER = 'sdk\tversion\tbinding\tfile\tprovoked\texpected\taccepted\n'


def read_accepted(path):
    """The `accepted` column of an existing cases.tsv keyed by file name.
    It is written by hand (why the decoder's record may differ from
    `expected`, see parse/corpus_expected_test.go) and carried over here."""
    out = {}
    try:
        with open(path) as f:
            lines = f.read().rstrip('\n').split('\n')
    except OSError:
        return out
    for line in lines[1:]:
        cols = line.split('\t')
        if len(cols) >= 7 and cols[6]:
            out[cols[3]] = cols[6]
    return out


class Corpus:
    """Writes captures for one SDK into <root>/<dir>/ (removing only what
    this harness writes, so golden records beside the captures stay). The
    `accepted` column of the previous cases.tsv is kept by file name."""

    def __init__(self, root, d, sdk, version):
        self.dir = os.path.join(root, d)
        os.makedirs(self.dir, exist_ok=True)
        self.accepted = read_accepted(os.path.join(self.dir, 'cases.tsv'))
        for pat in ('*.http', '*.req', 'cases.tsv', 'FAILED.txt'):
            for f in glob.glob(os.path.join(self.dir, pat)):
                os.remove(f)
        self.sdk, self.version, self.rows, self.failed = sdk, version, [], []

    def http(self, name, provoked, expected, addr, method, headers, body):
        req = http_request(method, addr, PATH, headers, body)
        try:
            resp = raw_http(addr, req)
        except OSError as e:
            resp, err = b'', e
        else:
            err = 'no reply'
        if not resp:
            self.failed.append(f'{name}: {err}')
            print(f'  FAILED {name}: {err}')
            return b''
        with open(os.path.join(self.dir, name + '.req'), 'wb') as f:
            f.write(req)
        with open(os.path.join(self.dir, name + '.http'), 'wb') as f:
            f.write(resp)
        clean = lambda s: s.replace('\t', ' ').replace('\n', ' ')
        self.rows.append('\t'.join([self.sdk, self.version, 'mcp-http', name + '.http', clean(provoked), clean(expected),
                                    self.accepted.get(name + '.http', '')]))
        print(f'  {os.path.basename(self.dir):<14} {name}.http ({len(resp)} bytes)')
        return resp

    def finish(self):
        with open(os.path.join(self.dir, 'cases.tsv'), 'w') as f:
            f.write(CASES_HEADER + '\n'.join(self.rows) + '\n')
        if self.failed:
            with open(os.path.join(self.dir, 'FAILED.txt'), 'w') as f:
                f.write('\n'.join(self.failed) + '\n')


def cases(c, prefix, addr):
    """The same cases against every server. Expectations are what the MCP
    spec asks for; INDEX.md shows them beside what each SDK sent."""
    P = lambda name, provoked, expected, headers, body, method='POST': c.http(prefix + name, provoked, expected, addr, method, headers, body)
    init = jrpc(0, 'initialize', {'protocolVersion': MCP_VERSION, 'capabilities': {},
                                  'clientInfo': {'name': 'errtrail-capture', 'version': '1'}})
    resp = P('initialize-result', 'initialize (sets up the session used below)', '- (JSON-RPC result with Mcp-Session-Id: not an error)', mcp_headers(), init)
    sid = header_value(resp, 'Mcp-Session-Id')
    if not sid:
        raise RuntimeError('no Mcp-Session-Id in the initialize reply: %r' % resp[:400])
    H = mcp_headers(sid, MCP_VERSION)
    P('initialized-accepted', 'notifications/initialized', '- (HTTP 202, empty body: not an error)', H,
      b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    P('tools-list-result', 'tools/list', '- (JSON-RPC result: not an error)', H, jrpc(1, 'tools/list', {}))
    P('unknown-tool', 'tools/call for a tool that does not exist', 'protocol error -32602 (spec) or tool result isError:true', H,
      jrpc(2, 'tools/call', call('no_such_tool', {})))
    P('tool-error', 'tool raises its own error (Python ToolError, TS Error)', 'tool result isError:true', H,
      jrpc(3, 'tools/call', call('search_inventory', {'make': 'fail'})))
    P('tool-crash', 'tool raises an unexpected exception (Python RuntimeError; TS: the same Error as tool-error)', 'tool result isError:true', H,
      jrpc(4, 'tools/call', call('search_inventory', {'make': 'crash'})))
    P('tool-invalid-arguments', 'arguments fail the input schema (max_results a string)', 'tool result isError:true or -32602', H,
      jrpc(5, 'tools/call', call('search_inventory', {'make': 'audi', 'max_results': 'ten'})))
    P('tool-missing-argument', 'required argument make missing', 'tool result isError:true or -32602', H,
      jrpc(6, 'tools/call', call('search_inventory', {})))
    P('tool-aap-error', 'tool fails with seed 000 aap.error (TS: isError + structuredContent; Python: ToolError with the JSON text)', 'tool result isError:true + aap.error UNSUPPORTED_FILTER', H,
      jrpc(7, 'tools/call', call('aap_search', {})))
    P('tool-jsonrpc-error', 'tool raises the SDK protocol error type with code -32000 and data', 'protocol error -32000', H,
      jrpc(8, 'tools/call', call('rpc_error', {})))
    P('tool-validation-error-list', 'tool validates its input itself and raises the SDK protocol error with the pydantic (Python) / zod (TS) issue list as data (app code)', 'protocol error -32602 with data = issue array without @type', H,
      jrpc(18, 'tools/call', call('book_test_drive', {'vin': '123', 'date': 'tomorrow'})))
    P('resource-not-found', 'resources/read of an unknown URI (no resource or template matches)', 'resource not found (-32002 up to 2025-11-25, -32602 from 2026-07-28)', H,
      jrpc(9, 'resources/read', {'uri': 'inventory://dealers/unknown'}))
    P('resource-not-found-handler', 'template handler reports not found (Python ResourceNotFoundError; TS McpError -32002 with uri)', 'resource not found', H,
      jrpc(10, 'resources/read', {'uri': 'inventory://vehicles/WVWZZZ1JZXW000001'}))
    P('unknown-method', 'method tasks/get (an A2A method name, not an MCP method)', 'MethodNotFound -32601', H,
      jrpc(11, 'tasks/get', {'id': 'x'}))
    P('invalid-params', 'tools/call with params.name a number', 'InvalidParams -32602', H,
      jrpc(12, 'tools/call', {'name': 42}))
    P('invalid-params-resource', 'resources/read without uri', 'InvalidParams -32602', H,
      jrpc(13, 'resources/read', {}))
    P('unknown-prompt', 'prompts/get of a prompt that does not exist', 'InvalidParams -32602', H,
      jrpc(14, 'prompts/get', {'name': 'no_such_prompt'}))
    P('prompt-missing-argument', 'prompts/get summarize without its required argument', 'InvalidParams -32602', H,
      jrpc(15, 'prompts/get', {'name': 'summarize', 'arguments': {}}))
    P('parse-error', 'body not JSON', 'parse error -32700 / HTTP 400', H, b'{"jsonrpc":"2.0","id":16,"method":')
    P('invalid-request', 'JSON that is not a JSON-RPC request (no method)', 'InvalidRequest -32600', H, b'{"jsonrpc":"2.0","id":17}')
    P('missing-session', 'tools/call without Mcp-Session-Id on a stateful server', 'HTTP 400', mcp_headers('', MCP_VERSION),
      jrpc(23, 'tools/call', call('search_inventory', {'make': 'audi'})))
    P('unknown-session', 'tools/call with an unknown Mcp-Session-Id', 'HTTP 404', mcp_headers('NOSUCHSESSION', MCP_VERSION),
      jrpc(24, 'tools/call', call('search_inventory', {'make': 'audi'})))
    P('bad-protocol-version', 'MCP-Protocol-Version: 1999-01-01', 'HTTP 400', mcp_headers(sid, '1999-01-01'), jrpc(20, 'tools/list', {}))
    P('no-accept', 'POST without Accept: text/event-stream', 'HTTP 406', [('Content-Type', 'application/json'), ('Mcp-Session-Id', sid), ('MCP-Protocol-Version', MCP_VERSION)],
      jrpc(21, 'tools/list', {}))
    P('wrong-content-type', 'Content-Type: text/plain', 'HTTP 415', [('Content-Type', 'text/plain'), ('Accept', 'application/json, text/event-stream'), ('Mcp-Session-Id', sid), ('MCP-Protocol-Version', MCP_VERSION)],
      jrpc(22, 'tools/list', {}))
    P('session-delete', 'DELETE of the session', '- (HTTP 200 or 204 with an empty body: not an error)', [('Mcp-Session-Id', sid), ('MCP-Protocol-Version', MCP_VERSION)], None, method='DELETE')


def start(cmd, cwd, name):
    log = open(os.path.join(tempfile.gettempdir(), f'errtrail-capture-{name}.log'), 'w')
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        if line.startswith('READY '):
            addr = json.loads(line[6:])['http']
            # Wait until the port answers (uvicorn's lifespan may still run).
            for _ in range(100):
                try:
                    socket.create_connection(tuple([addr.split(':')[0], int(addr.split(':')[1])]), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            return p, addr
    stop(p)
    raise RuntimeError(f'server did not become ready: {cmd}')


def stop(p):
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def python_version(py):
    return subprocess.check_output([py, '-c', 'import importlib.metadata as m; print(m.version("mcp"))'], text=True).strip()


def capture_python(root):
    py = os.path.join(HERE, '.venv-mcp', 'bin', 'python')
    c = Corpus(root, 'mcp-python', 'mcp (PyPI)', python_version(py))
    try:
        for mode in ('sse', 'json'):
            p, addr = start([py, 'mcp_server.py', mode], HERE, f'mcp-python-{mode}')
            try:
                cases(c, mode + '-', addr)
            finally:
                stop(p)
    finally:
        c.finish()


def capture_typescript(root):
    d = os.path.join(CAPTURE, 'js', 'mcp')
    with open(os.path.join(d, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json')) as f:
        version = json.load(f)['version']
    c = Corpus(root, 'mcp-typescript', '@modelcontextprotocol/sdk', version)
    try:
        for mode in ('sse', 'json'):
            p, addr = start(['node', 'server.mjs', mode], d, f'mcp-typescript-{mode}')
            try:
                cases(c, mode + '-', addr)
            finally:
                stop(p)
    finally:
        c.finish()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=os.path.join(CAPTURE, '..', '..', 'parse', 'testdata', 'corpus'))
    ap.add_argument('--only', default='mcp-python,mcp-typescript')
    a = ap.parse_args()
    want = set(a.only.split(','))
    for name, fn in (('mcp-python', capture_python), ('mcp-typescript', capture_typescript)):
        if name in want:
            print(name)
            fn(a.out)


if __name__ == '__main__':
    sys.exit(main())
