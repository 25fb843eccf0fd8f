"""errtrail mcp asked by the MCP Python SDK (PyPI: mcp), for cmd/errtrail's
TestMCPPython. Connects over Streamable HTTP (--url, with the bearer token
from the variable --token-env names) or stdio (--stdio CMD ARG...), in the
handshake of 2025-11-25 (--mode legacy) or the 2026-07-28 protocol (--mode
2026-07-28), calls every tool once as the test asks and prints one JSON
object with the answers, as the SDK parsed them."""

import argparse
import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def dump(result):
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url")
    p.add_argument("--token-env")
    p.add_argument("--mode", default="auto")
    p.add_argument("--calls", required=True, help="JSON file: a list of [tool, arguments]")
    p.add_argument("--stdio", nargs=argparse.REMAINDER)
    a = p.parse_args()
    if a.url:
        headers = {}
        if a.token_env:
            headers["Authorization"] = "Bearer " + os.environ[a.token_env]
        server = streamable_http_client(a.url, http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    else:
        server = StdioServerParameters(command=a.stdio[0], args=a.stdio[1:], env=dict(os.environ))
    with open(a.calls) as f:
        calls = json.load(f)
    out = {}
    async with Client(server, mode=a.mode, cache=None) as c:
        out["protocol_version"] = c.protocol_version
        tools = await c.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        out["calls"] = []
        for name, args in calls:
            out["calls"].append(dump(await c.call_tool(name, args)))
    json.dump(out, sys.stdout)


asyncio.run(main())
