// Starts an MCP server built with the official TypeScript SDK
// (@modelcontextprotocol/sdk) on 127.0.0.1 for testdata/capture, over
// streamable HTTP with sessions (one transport per session, the SDK's own
// stateful pattern).
//
//   node server.mjs json   # enableJsonResponse: one application/json reply per POST
//   node server.mjs sse    # default: each POST answered with a text/event-stream
//
// Prints one line `READY {"http": "127.0.0.1:PORT"}`; the endpoint is /mcp.
// python/mcp_capture.py drives it over raw sockets. Tools and resources match
// the Python and Go capture servers.
import { randomUUID } from 'node:crypto';
import express from 'express';
import { z } from 'zod';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, McpError } from '@modelcontextprotocol/sdk/types.js';

const mode = process.argv[2] || 'json';

// Seed 000's aap.error as an MCP tool reports it (structuredContent + text).
const aapToolError = {
  type: 'aap.error', error_id: 'error_example_001', code: 'UNSUPPORTED_FILTER',
  message: 'This deployment does not support features_all.', retryable: false,
  details: {
    errors: [{ instanceLocation: '/filters/features_all', keyword: 'capability', error: 'Filter is not advertised.' }],
    hint: 'Read the published search capabilities before forming another query.',
  },
  created_at: '2026-10-24T15:00:00Z',
};

function build() {
  const s = new McpServer({ name: 'errtrail-capture', version: '1.0.0' });
  s.registerTool('search_inventory', {
    description: 'search vehicles',
    inputSchema: { make: z.string(), max_results: z.number().int().optional() },
  }, async ({ make }) => {
    if (make === 'fail') throw new Error('inventory backend timed out after 30s');
    if (make === 'crash') throw new TypeError('dealer directory unreachable');
    return { content: [{ type: 'text', text: '{"count":3}' }] };
  });
  s.registerTool('aap_search', { description: 'AAP skill failing with aap.error' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(aapToolError) }],
    structuredContent: aapToolError,
  }));
  s.registerTool('rpc_error', { description: 'throws an McpError (a protocol error)' }, async () => {
    throw new McpError(-32000, 'upstream dealer system unavailable', { retry_after_ms: 5000 });
  });
  const booking = z.object({ vin: z.string().length(17), date: z.iso.date() });
  s.registerTool('book_test_drive', {
    description: 'validates its input with zod itself and reports the issue list as a protocol error',
    inputSchema: { vin: z.string(), date: z.string() },
  }, async (args) => {
    const r = booking.safeParse(args);
    // App code, a common pattern: the zod issue list as error.data.
    if (!r.success) throw new McpError(-32602, 'Invalid test-drive booking', r.error.issues);
    return { content: [{ type: 'text', text: '{"booked":true}' }] };
  });
  s.registerResource('known', 'inventory://vehicles/known', { mimeType: 'application/json' },
    async (uri) => ({ contents: [{ uri: uri.href, text: '[]' }] }));
  s.registerResource('vehicle', new ResourceTemplate('inventory://vehicles/{vin}', { list: undefined }), {},
    async (uri) => { throw new McpError(-32002, 'Resource not found', { uri: uri.href }); });
  s.registerPrompt('summarize', { description: 'a prompt that needs an argument', argsSchema: { topic: z.string() } },
    ({ topic }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Summarize ${topic}` } }] }));
  return s;
}

const transports = {};
const app = express();

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

// Routing is app code (the SDK leaves it to the application); every reply
// below comes from the SDK's transport. A request naming a session that does
// not exist, or no session at all, is handed to an existing transport so that
// the SDK's own session check answers it.
app.all('/mcp', async (req, res) => {
  const sid = req.headers['mcp-session-id'];
  const any = () => Object.values(transports)[0];
  if (sid) {
    await (transports[sid] || any()).handleRequest(req, res);
    return;
  }
  let body;
  try { body = JSON.parse(await readBody(req)); } catch { body = undefined; }
  if (req.method === 'POST' && isInitializeRequest(body)) {
    const t = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: mode === 'json',
      onsessioninitialized: (id) => { transports[id] = t; },
    });
    t.onclose = () => { if (t.sessionId) delete transports[t.sessionId]; };
    await build().connect(t);
    await t.handleRequest(req, res, body);
    return;
  }
  await any().handleRequest(req, res, body);
});

const srv = app.listen(0, '127.0.0.1', () => {
  console.log('READY ' + JSON.stringify({ http: `127.0.0.1:${srv.address().port}` }));
});
