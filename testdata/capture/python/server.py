"""Starts a2a-sdk (Python) servers on 127.0.0.1 for testdata/capture.

JSON-RPC at /jsonrpc and HTTP+JSON at /rest (both with the SDK's v0.3 compat
layer enabled), gRPC (v1.0 and v0.3 services on one server). Prints one line
`READY {json}` with the addresses; the Go harness drives them over raw sockets.
"""
import asyncio
import json
import socket

import grpc
import uvicorn
from starlette.applications import Starlette

from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import DefaultGrpcServerCallContextBuilder, GrpcHandler
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
from a2a.server.routes.rest_routes import create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill, Role, TaskState, a2a_pb2_grpc,
)
from a2a.utils import errors

REQUIRED_EXT = 'https://errtrail.example/ext/required/v1'

AAP = {
    'type': 'aap.error', 'error_id': 'err_01HZ9RATE01', 'code': 'RATE_LIMITED',
    'message': 'Per-key rate limit exceeded.', 'retryable': True,
    'details': {'retry_after_ms': 30000}, 'created_at': '2026-04-30T10:16:00Z',
}


def text(msg):
    for p in getattr(msg, 'parts', []) or []:
        if p.HasField('text'):
            return p.text
    return ''


class Executor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue) -> None:
        msg = context.message
        t = text(msg)
        if t in ('complete', 'fail-task', 'internal-after-task'):
            task = new_task_from_user_message(msg)
            task.id, task.context_id = context.task_id, context.context_id
            await event_queue.enqueue_event(task)
            up = TaskUpdater(event_queue, context.task_id, context.context_id)
            if t == 'complete':
                await up.complete()
            elif t == 'fail-task':
                await up.start_work()
                await up.failed(up.new_agent_message([_part('model backend returned HTTP 503')]))
            else:
                raise RuntimeError('worker crashed after the task was created')
            return
        if t == 'internal':
            raise RuntimeError('database connection refused')
        if t == 'rate-limit':
            raise errors.InternalError('Caller orchestrator-7 exceeded 60 SendMessage calls per minute',
                                       data={'retryAfterSeconds': 12, 'limit': 60, 'caller': 'orchestrator-7'})
        if t == 'aap-error':
            raise errors.InternalError('Per-key rate limit exceeded.', data=AAP)
        if t == 'unsupported-content-type':
            raise errors.ContentTypeNotSupportedError('output mode video/mp4 is not supported')
        if t == 'unsupported-operation':
            raise errors.UnsupportedOperationError('this agent cannot do that')
        if t == 'no-events':
            return
        await event_queue.enqueue_event(new_text_message('ok', role=Role.ROLE_AGENT, context_id=context.context_id))

    async def cancel(self, context, event_queue) -> None:
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        await up.cancel()


def _part(s):
    from a2a.helpers.proto_helpers import new_text_part
    return new_text_part(s)


class Gate(DefaultRequestHandler):
    """App wrapper that rejects before the executor runs (errors raised by
    the executor itself may become a FAILED task)."""

    def _pre(self, params):
        t = text(getattr(params, 'message', None))
        if t == 'rate-limit-handler':
            raise errors.InternalError('Caller orchestrator-7 exceeded 60 SendMessage calls per minute',
                                       data={'retryAfterSeconds': 12, 'limit': 60, 'caller': 'orchestrator-7'})
        if t == 'aap-error-handler':
            raise errors.InternalError('Per-key rate limit exceeded.', data=AAP)

    async def on_message_send(self, params, context=None):
        self._pre(params)
        return await super().on_message_send(params, context)

    async def on_message_send_stream(self, params, context=None):
        self._pre(params)
        async for ev in super().on_message_send_stream(params, context):
            yield ev


class HTTPAuth(DefaultServerCallContextBuilder):
    def build_user(self, request):
        if request.headers.get('authorization') == 'Bearer expired':
            raise PermissionError('bearer token expired')
        return super().build_user(request)


class GRPCAuth(DefaultGrpcServerCallContextBuilder):
    def build_user(self, context):
        for k, v in context.invocation_metadata() or ():
            if k == 'authorization' and v == 'Bearer expired':
                raise PermissionError('bearer token expired')
        return super().build_user(context)


def card(name, caps):
    return AgentCard(
        name=name, description='errtrail capture agent', version='1.0.0',
        supported_interfaces=[AgentInterface(url='http://127.0.0.1/', protocol_binding=b, protocol_version=v)
                              for b in ('JSONRPC', 'HTTP+JSON', 'GRPC') for v in ('1.0', '0.3')],
        capabilities=caps, default_input_modes=['text'], default_output_modes=['text'],
        skills=[AgentSkill(id='s', name='s', description='s', tags=['t'])],
    )


async def serve(c):
    handler = Gate(agent_executor=Executor(), task_store=InMemoryTaskStore(), agent_card=c)
    routes = create_jsonrpc_routes(handler, '/jsonrpc', context_builder=HTTPAuth(), enable_v0_3_compat=True)
    routes += create_rest_routes(handler, context_builder=HTTPAuth(), enable_v0_3_compat=True, path_prefix='/rest')
    app = Starlette(routes=routes)
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level='warning', lifespan='off'))
    asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    gs = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler, context_builder=GRPCAuth()), gs)
    a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(CompatGrpcHandler(handler, context_builder=GRPCAuth()), gs)
    gport = gs.add_insecure_port('127.0.0.1:0')
    await gs.start()
    while not server.started:
        await asyncio.sleep(0.05)
    return {'http': f'127.0.0.1:{sock.getsockname()[1]}', 'grpc': f'127.0.0.1:{gport}'}, gs


async def main():
    main_s, g1 = await serve(card('main', AgentCapabilities(streaming=True, push_notifications=False, extended_agent_card=True)))
    restricted, g2 = await serve(card('restricted', AgentCapabilities(
        streaming=False, push_notifications=False, extended_agent_card=False,
        extensions=[AgentExtension(uri=REQUIRED_EXT, description='required', required=True)])))
    print('READY ' + json.dumps({'main': main_s, 'restricted': restricted}), flush=True)
    await asyncio.Event().wait()


if __name__ == '__main__':
    asyncio.run(main())
