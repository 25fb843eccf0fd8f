// Starts @a2a-js/sdk 1.x servers on 127.0.0.1 (JSON-RPC, REST, gRPC; plus the
// SDK's v0.3 compat layer) and prints one READY line with the ports as JSON.
// The capture harness (testdata/capture/go) drives them over raw sockets.
import express from 'express';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from 'a2a-js-1/server';
import { jsonRpcHandler, restHandler, UserBuilder } from 'a2a-js-1/server/express';
import { grpcService, A2AService } from 'a2a-js-1/server/grpc';
import { A2AError, ContentTypeNotSupportedError, UnsupportedOperationError } from 'a2a-js-1/errors';
import { legacyRestRouter } from 'a2a-js-1/compat/v0_3/server/express';
import { legacyGrpcService, LegacyA2AService } from 'a2a-js-1/compat/v0_3/server/grpc';
import { TaskState, Role } from 'a2a-js-1';

const REQUIRED_EXT = 'https://errtrail.example/ext/required/v1';

// Application error classes: the SDK derives the JSON-RPC code from the class
// name (unknown names -> -32603) and puts `reason` + `metadata` in ErrorInfo.
class RateLimitExceededError extends A2AError {
  reason = 'RATE_LIMIT_EXCEEDED';
}
class AAPRateLimitedError extends A2AError {
  reason = 'RATE_LIMITED';
}

function text(msg) {
  for (const p of msg?.parts ?? []) {
    if (p?.content?.$case === 'text') return p.content.value;
    if (typeof p?.text === 'string') return p.text;
  }
  return '';
}

function status(taskId, contextId, state, note) {
  return AgentEvent.statusUpdate({
    taskId, contextId, metadata: {},
    status: {
      state, timestamp: new Date().toISOString(),
      message: note ? {
        role: Role.ROLE_AGENT, messageId: crypto.randomUUID(), taskId, contextId,
        parts: [{ content: { $case: 'text', value: note }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
        extensions: [], metadata: {}, referenceTaskIds: [],
      } : undefined,
    },
  });
}

class Executor {
  cancelTask = async (taskId, bus) => {};
  async execute(rc, bus) {
    const { taskId, contextId, userMessage } = rc;
    const task = () => AgentEvent.task({
      id: taskId, contextId, artifacts: [], history: [userMessage], metadata: {},
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
    });
    switch (text(userMessage)) {
      case 'complete':
        bus.publish(task());
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
        return;
      case 'fail-task':
        bus.publish(task());
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING));
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_FAILED, 'model backend returned HTTP 503'));
        return;
      case 'internal':
        throw new Error('database connection refused');
      case 'internal-after-task':
        bus.publish(task());
        throw new Error('worker crashed after the task was created');
      case 'rate-limit':
        throw new RateLimitExceededError({
          message: 'Caller orchestrator-7 exceeded 60 SendMessage calls per minute',
          metadata: { retryDelay: '12s', limit: '60', window: '60s', caller: 'orchestrator-7' },
        });
      case 'aap-error':
        throw new AAPRateLimitedError({
          message: 'Per-key rate limit exceeded.',
          metadata: { code: 'RATE_LIMITED', error_id: 'err_01HZ9RATE01', retryable: 'true', created_at: '2026-04-30T10:16:00Z', retry_after_ms: '30000' },
        });
      case 'unsupported-content-type':
        throw new ContentTypeNotSupportedError('output mode video/mp4 is not supported');
      case 'unsupported-operation':
        throw new UnsupportedOperationError('this agent cannot do that');
      case 'no-events':
        return;
    }
    bus.publish(AgentEvent.message({
      role: Role.ROLE_AGENT, messageId: crypto.randomUUID(), contextId, taskId: '',
      parts: [{ content: { $case: 'text', value: 'ok' }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      extensions: [], metadata: {}, referenceTaskIds: [],
    }));
  }
}

function card(name, capabilities) {
  return {
    name, description: 'errtrail capture agent', version: '1.0.0',
    supportedInterfaces: ['JSONRPC', 'HTTP+JSON', 'GRPC'].flatMap((protocolBinding) =>
      ['1.0', '0.3'].map((protocolVersion) => ({ url: 'http://127.0.0.1/', protocolBinding, tenant: '', protocolVersion }))),
    provider: undefined, documentationUrl: '',
    capabilities, securitySchemes: {}, securityRequirements: [],
    defaultInputModes: ['text'], defaultOutputModes: ['text'],
    skills: [{ id: 's', name: 's', description: 's', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
}

// Fails for "Bearer expired" the way an app's authentication would.
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
    if (t === 'rate-limit-handler') throw new RateLimitExceededError({
      message: 'Caller orchestrator-7 exceeded 60 SendMessage calls per minute',
      metadata: { retryDelay: '12s', limit: '60', window: '60s', caller: 'orchestrator-7' } });
    if (t === 'aap-error-handler') throw new AAPRateLimitedError({
      message: 'Per-key rate limit exceeded.',
      metadata: { code: 'RATE_LIMITED', error_id: 'err_01HZ9RATE01', retryable: 'true', created_at: '2026-04-30T10:16:00Z', retry_after_ms: '30000' } });
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
  app.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder, legacyCompat: { enabled: true } }));
  app.use('/rest', restHandler({ requestHandler: handler, userBuilder, legacyCompat: { enabled: true } }));
  app.use('/legacy', legacyRestRouter({ requestHandler: handler, userBuilder }));
  const http = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(s)));
  });
  const gs = new Server();
  gs.addService(A2AService, grpcService({ requestHandler: handler, userBuilder }));
  gs.addService(LegacyA2AService, legacyGrpcService({ requestHandler: handler, userBuilder }));
  const gport = await new Promise((resolve, reject) =>
    gs.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
  return { http: `127.0.0.1:${http.address().port}`, grpc: `127.0.0.1:${gport}` };
}

const main = await serve(card('main', { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: true }));
const restricted = await serve(card('restricted', {
  streaming: false, pushNotifications: false, extendedAgentCard: false,
  extensions: [{ uri: REQUIRED_EXT, description: 'required', required: true, params: undefined }],
}));
console.log('READY ' + JSON.stringify({ main, restricted }));
