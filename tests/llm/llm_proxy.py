#!/usr/bin/env python3
"""A faulty proxy on 127.0.0.1 in front of a real OpenAI-compatible server, for the LLM fault tests.

Usage: llm_proxy.py UPSTREAM_URL MODE PORT_FILE. Binds a free port, writes it to PORT_FILE.
MODE: pass | delay=SECONDS | malformed | status=CODE | flaky (HTTP 500 to the first request of each prompt) |
die_after=N (forwards N requests, then the process exits: a server killed mid-run).
"""
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

upstream, mode, port_file = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
seen = 0
bodies = set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, data):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            seen += 1
            n = seen
        if mode.startswith("die_after=") and n > int(mode.split("=")[1]):
            os._exit(0)
        if mode.startswith("delay="):
            time.sleep(float(mode.split("=")[1]))
        if mode == "malformed":
            return self.reply(200, b'{"choices": [{"message": ')
        if mode.startswith("status="):
            return self.reply(int(mode.split("=")[1]), b'{"error": {"message": "injected by the proxy"}}')
        if mode == "flaky":
            with lock:
                first = body not in bodies
                bodies.add(body)
            if first:
                return self.reply(500, b'{"error": {"message": "injected by the proxy"}}')
        request = urllib.request.Request(upstream + self.path, data=body,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as r:
                self.reply(r.status, r.read())
        except urllib.error.HTTPError as e:
            self.reply(e.code, e.read())


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


server = Server(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
