// Starts @a2a-js/sdk 0.3.x servers on 127.0.0.1 (JSON-RPC, REST /v1, gRPC)
// and prints one READY line with the ports as JSON.
import express from 'express';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { A2AError, DefaultRequestHandler, InMemoryTaskStore } from 'a2a-js-03/server';
import { jsonRpcHandler, restHandler, UserBuilder } from 'a2a-js-03/server/express';
import { grpcService, A2AService } from 'a2a-js-03/server/grpc';

const REQUIRED_EXT = 'https://errtrail.example/ext/required/v1';

function text(msg) {
  for (const p of msg?.parts ?? []) if (p.kind === 'text') return p.text;
  return '';
}

class Executor {
  cancelTask = async (taskId, bus) => {
    bus.publish({ kind: 'status-update', taskId, contextId: '', status: { state: 'canceled' }, final: true });
    bus.finished();
  };
  async execute(rc, bus) {
    const { taskId, contextId, userMessage } = rc;
    const task = { kind: 'task', id: taskId, contextId, history: [userMessage], status: { state: 'submitted', timestamp: new Date().toISOString() } };
    const upd = (state, note) => ({
      kind: 'status-update', taskId, contextId, final: state !== 'working',
      status: {
        state, timestamp: new Date().toISOString(),
        ...(note ? { message: { kind: 'message', role: 'agent', messageId: crypto.randomUUID(), taskId, contextId, parts: [{ kind: 'text', text: note }] } } : {}),
      },
    });
    switch (text(userMessage)) {
      case 'complete':
        bus.publish(task); bus.publish(upd('completed')); bus.finished(); return;
      case 'fail-task':
        bus.publish(task); bus.publish(upd('working')); bus.publish(upd('failed', 'model backend returned HTTP 503')); bus.finished(); return;
      case 'internal':
        throw new Error('database connection refused');
      case 'internal-after-task':
        bus.publish(task);
        throw new Error('worker crashed after the task was created');
      case 'rate-limit':
        throw A2AError.internalError('Caller orchestrator-7 exceeded 60 SendMessage calls per minute',
          { retryAfterSeconds: 12, limit: 60, caller: 'orchestrator-7' });
      case 'aap-error':
        throw new A2AError(-32000, 'Per-key rate limit exceeded.', {
          type: 'aap.error', error_id: 'err_01HZ9RATE01', code: 'RATE_LIMITED', message: 'Per-key rate limit exceeded.',
          retryable: true, details: { retry_after_ms: 30000 }, created_at: '2026-04-30T10:16:00Z',
        });
      case 'unsupported-content-type':
        throw new A2AError(-32005, 'output mode video/mp4 is not supported');
      case 'unsupported-operation':
        throw A2AError.unsupportedOperation('this agent cannot do that');
      case 'no-events':
        bus.finished(); return;
    }
    bus.publish({ kind: 'message', role: 'agent', messageId: crypto.randomUUID(), contextId, parts: [{ kind: 'text', text: 'ok' }] });
    bus.finished();
  }
}

function card(name, capabilities, extra = {}) {
  return {
    name, description: 'errtrail capture agent', version: '1.0.0', protocolVersion: '0.3.0',
    url: 'http://127.0.0.1/jsonrpc', preferredTransport: 'JSONRPC', capabilities,
    defaultInputModes: ['text'], defaultOutputModes: ['text'],
    skills: [{ id: 's', name: 's', description: 's', tags: [] }], ...extra,
  };
}

const userBuilder = async (req) => {
  const auth = req?.headers?.authorization ?? req?.metadata?.get?.('authorization')?.[0];
  if (auth === 'Bearer expired') throw new Error('bearer token expired');
  return UserBuilder.noAuthentication();
};

// The SDK turns executor exceptions into a FAILED task, so an app that wants
// an error envelope (e.g. a rate limit) rejects before the executor runs: this
// wrapper around the request handler does that for two trigger texts.
function gate(handler) {
  const pre = (params) => {
    const t = text(params?.message);
    if (t === 'rate-limit-handler') throw A2AError.internalError('Caller orchestrator-7 exceeded 60 SendMessage calls per minute',
      { retryAfterSeconds: 12, limit: 60, caller: 'orchestrator-7' });
    if (t === 'aap-error-handler') throw new A2AError(-32000, 'Per-key rate limit exceeded.', {
      type: 'aap.error', error_id: 'err_01HZ9RATE01', code: 'RATE_LIMITED', message: 'Per-key rate limit exceeded.',
      retryable: true, details: { retry_after_ms: 30000 }, created_at: '2026-04-30T10:16:00Z' });
  };
  return new Proxy(handler, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === 'sendMessage') return async (p, ...rest) => { pre(p); return v.call(target, p, ...rest); };
      if (prop === 'sendMessageStream') return async function* (p, ...rest) { pre(p); yield* v.call(target, p, ...rest); };
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

async function serve(cardDef) {
  const handler = gate(new DefaultRequestHandler(cardDef, new InMemoryTaskStore(), new Executor()));
  const app = express();
  app.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder }));
  app.use('/', restHandler({ requestHandler: handler, userBuilder }));
  const http = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(s)));
  });
  const gs = new Server();
  gs.addService(A2AService, grpcService({ requestHandler: handler, userBuilder }));
  const gport = await new Promise((resolve, reject) =>
    gs.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
  return { http: `127.0.0.1:${http.address().port}`, grpc: `127.0.0.1:${gport}` };
}

const main = await serve(card('main', { streaming: true, pushNotifications: false }, { supportsAuthenticatedExtendedCard: true }));
const restricted = await serve(card('restricted', {
  streaming: false, pushNotifications: false,
  extensions: [{ uri: REQUIRED_EXT, description: 'required', required: true }],
}));
console.log('READY ' + JSON.stringify({ main, restricted }));
