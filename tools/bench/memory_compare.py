#!/usr/bin/env python3
"""The memory-server workload through one lean client (Python's standard library), against the
reference (npm @modelcontextprotocol/server-memory over stdio, as its users run it) or Engram
(MCP over one kept-alive HTTP connection). Prints one JSON line of figures; engram_bench
entities runs it against both and prints the table.

  memory_compare.py reference ENTITIES NODE_MODULES
  memory_compare.py engram ENTITIES URL TOKEN PID

The client's time per call is from the request's first byte written to the answer parsed.
Engram's own time per call is its Server-Timing header (from the request read to the answer
ready, before the write). The reference has no such figure; over stdio its client time is
its server time plus a pipe round trip.

Data: ENTITIES entities "ent-00000".. with 3 observations each, one of 25 types ("kind00"..
"kind24", ~4 % each), the word "active" in the observations of 42 % of them; ENTITIES
relations (entity i -> i+1, i -> i*7 mod n alternately). Query classes for search_nodes: one
entity (its full name), ~4 % (a type), ~42 % ("active"), none. MEMORY_BENCH_QUERIES calls
per figure (default 50).
"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse


class stdio_server:
    """JSON-RPC over a child's stdin/stdout, one message a line (MCP's stdio transport)."""

    def __init__(self, command, env):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.pid = self.proc.pid
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def rpc(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the reference server closed its output")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply, None

    def notify(self, method):
        self.send({"jsonrpc": "2.0", "method": method})

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class http_server:
    """JSON-RPC over POSTs on one kept-alive HTTP/1.1 connection."""

    def __init__(self, url, token):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
        self.path = u.path
        self.headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        self.next_id = 0
        self.connections = 0

    def post(self, message):
        for attempt in (0, 1):
            try:
                if self.conn.sock is None:
                    self.connections += 1
                self.conn.request("POST", self.path, json.dumps(message), self.headers)
                r = self.conn.getresponse()
                return r, r.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()  # the server closed a kept-alive connection: once more on a new one
                if attempt:
                    raise

    def rpc(self, method, params):
        self.next_id += 1
        r, body = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        if r.status != 200:
            raise RuntimeError(f"{method}: HTTP {r.status}: {body[:500]!r}")
        timing = re.search(r"dur=([0-9.]+)", r.getheader("Server-Timing") or "")
        return json.loads(body), float(timing.group(1)) if timing else None

    def notify(self, method):
        self.post({"jsonrpc": "2.0", "method": method})

    def close(self):
        self.conn.close()


def pct(xs, p):
    v = sorted(xs)
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0.0


def main():
    mode, count = sys.argv[1], int(sys.argv[2])
    scratch = None
    if mode == "reference":
        modules = sys.argv[3]
        scratch = tempfile.mkdtemp(prefix="memory-ref-")
        env = dict(os.environ, MEMORY_FILE_PATH=os.path.join(scratch, "memory.jsonl"))
        server = stdio_server(["node", os.path.join(modules, "@modelcontextprotocol/server-memory/dist/index.js")],
                              env)
        pid = server.pid
    else:
        server = http_server(sys.argv[3], sys.argv[4])
        pid = int(sys.argv[5])
    server.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "engram-memory-bench-py", "version": "1.0.0"}})
    server.notify("notifications/initialized")

    def call(name, args):
        t = time.perf_counter()
        reply, server_ms = server.rpc("tools/call", {"name": name, "arguments": args})
        client_ms = (time.perf_counter() - t) * 1e3
        result = reply.get("result")
        if result is None or result.get("isError"):
            raise RuntimeError(f"{name}: {json.dumps(reply)[:500]}")
        return client_ms, server_ms, result

    def name(i):
        return f"ent-{i:05d}"

    t0 = time.perf_counter()
    for b in range(0, count, 100):
        call("create_entities", {"entities": [
            {"name": name(i), "entityType": f"kind{i % 25:02d}",
             "observations": [f"note {i} about the account", "status active" if i % 100 < 42 else "status dormant",
                              f"owner team {i % 13}"]}
            for i in range(b, min(count, b + 100))]})
    for b in range(0, count, 100):
        call("create_relations", {"relations": [
            {"from": name(i), "to": name((i * 7) % count if i % 2 else (i + 1) % count), "relationType": "relates_to"}
            for i in range(b, min(count, b + 100))]})
    create_s = time.perf_counter() - t0

    rounds = int(os.environ.get("MEMORY_BENCH_QUERIES", "50"))

    def figures(calls):
        client = [c for c, _, _ in calls]
        server_side = [s for _, s, _ in calls if s is not None]
        out = {"p50": pct(client, 0.5), "p99": pct(client, 0.99)}
        if server_side:
            out.update({"server_p50": pct(server_side, 0.5), "server_p99": pct(server_side, 0.99)})
        return out

    classes = {
        "one": lambda k: name((k * 37) % count),
        "four_percent": lambda k: f"kind{k % 25:02d}",
        "forty_two_percent": lambda k: "active",
        "none": lambda k: f"nothing-{k}",
    }
    search = {}
    for cls, q in classes.items():
        calls = [call("search_nodes", {"query": q(k)}) for k in range(rounds)]
        last = calls[-1][2]
        structured = last.get("structuredContent") or {}
        search[cls] = dict(figures(calls), matched=structured.get("total", len(structured.get("entities", []))),
                           bytes=len(last["content"][0]["text"]))
    opened = [call("open_nodes", {"names": [name((k * 101) % count), name((k * 211) % count)]}) for k in range(rounds)]
    read_ms, _, graph = call("read_graph", {})

    status = open(f"/proc/{pid}/status").read()
    peak = re.search(r"VmHWM:\s+(\d+) kB", status)
    out = {
        "mode": mode, "entities": count, "create_s": create_s, "search": search, "open": figures(opened),
        "read_graph": {"ms": read_ms, "bytes": len(graph["content"][0]["text"])},
        "peak_rss": int(peak.group(1)) * 1024 if peak else 0,
        "connections": getattr(server, "connections", 0),
    }
    server.close()
    if scratch:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
