"""Starts an MCP server built with the official Python SDK (PyPI `mcp`) on
127.0.0.1 for testdata/capture, over streamable HTTP.

    python mcp_server.py json   # JSON-response mode (one application/json reply per POST)
    python mcp_server.py sse    # SSE mode (each POST answered with a text/event-stream)

Prints one line `READY {"http": "127.0.0.1:PORT"}` once it listens; the
endpoint is /mcp. mcp_capture.py drives it over raw sockets. The tools and
resources match those of the Go and TypeScript capture servers, so the same
cases provoke the same errors everywhere.
"""
import datetime
import json
import socket
import sys

import uvicorn
from pydantic import BaseModel, Field, ValidationError

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError

# Seed 000's aap.error as an MCP tool would report it.
AAP_TOOL_ERROR = {
    'type': 'aap.error', 'error_id': 'error_example_001', 'code': 'UNSUPPORTED_FILTER',
    'message': 'This deployment does not support features_all.', 'retryable': False,
    'details': {
        'errors': [{'instanceLocation': '/filters/features_all', 'keyword': 'capability', 'error': 'Filter is not advertised.'}],
        'hint': 'Read the published search capabilities before forming another query.',
    },
    'created_at': '2026-10-24T15:00:00Z',
}


class Booking(BaseModel):
    vin: str = Field(min_length=17, max_length=17)
    date: datetime.date


def build() -> MCPServer:
    s = MCPServer('errtrail-capture', version='1.0.0')

    @s.tool(description='search vehicles')
    def search_inventory(make: str, max_results: int = 10) -> dict:
        if make == 'fail':
            raise ToolError('inventory backend timed out after 30s')
        if make == 'crash':
            raise RuntimeError('dealer directory unreachable')
        return {'count': 3}

    @s.tool(description='AAP skill failing with aap.error (raised as a tool error carrying the JSON text)')
    def aap_search() -> dict:
        raise ToolError(json.dumps(AAP_TOOL_ERROR))

    @s.tool(description='raises an MCPError (a protocol error)')
    def rpc_error() -> dict:
        raise MCPError(-32000, 'upstream dealer system unavailable', {'retry_after_ms': 5000})

    @s.tool(description='validates its input with pydantic itself and reports the issue list as a protocol error')
    def book_test_drive(vin: str, date: str) -> dict:
        try:
            Booking(vin=vin, date=date)
        except ValidationError as ve:
            # App code, a common pattern: the pydantic issue list as error.data.
            raise MCPError(-32602, 'Invalid test-drive booking', json.loads(ve.json(include_url=False, include_input=False)))
        return {'booked': True}

    @s.resource('inventory://vehicles/known', mime_type='application/json')
    def known() -> str:
        return '[]'

    @s.resource('inventory://vehicles/{vin}')
    def vehicle(vin: str) -> str:
        raise ResourceNotFoundError(f'no vehicle {vin}')

    @s.prompt(description='a prompt that needs an argument')
    def summarize(topic: str) -> str:
        return f'Summarize {topic}'

    return s


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else 'json'
    app = build().streamable_http_app(json_response=(mode == 'json'))
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    cfg = uvicorn.Config(app, log_level='warning', lifespan='on')
    server = uvicorn.Server(cfg)
    print('READY ' + json.dumps({'http': f'127.0.0.1:{port}'}), flush=True)
    server.run(sockets=[sock])


if __name__ == '__main__':
    main()
