#!/usr/bin/env python3
"""A fake OpenAI-compatible chat endpoint on 127.0.0.1 for the LLM client's tests.

Usage: fake_llm_server.py PORT_FILE. Binds a free port, writes it to PORT_FILE, serves until
killed. The prompt chooses the behaviour, so one server covers every case:
  "letter=C"        log-probabilities favouring C (some mass on B and D, and on non-letters)
  "text=E"          no log-probabilities, the content "E"
  "malformed"       a body that is not JSON
  "status=500"      HTTP 500 every time;  "status=429" likewise
  "flaky=N"         HTTP 429 for the first N requests of this prompt, then letter=D
  "slow=S"          sleeps S seconds, then letter=F
  "noletter"        content "I think it is faster", no log-probabilities
  "... answer:"     a pair prompt (pair_prompt.hpp): HTTP 500 when its last line holds
                    "fault=500", else a letter chosen by the bytes of its last line (stable)
Every request's Authorization header is recorded; GET /saw-key?key=... says whether any request
carried it anywhere but there (the body), so a test can check the key stays in its header.
Every request is counted per prompt; GET /count?prompt=... returns the count, and
POST bodies must carry "model" and "messages" (else HTTP 400).
"""
import json
import math
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

counts = {}
bodies = []
keys = set()
lock = threading.Lock()


def logprob_answer(letter):
    others = {chr(ord(letter) - 1): 0.15, chr(ord(letter) + 1): 0.1, "The": 0.05}
    top = [{"token": letter, "logprob": math.log(0.7)}]
    top += [{"token": t, "logprob": math.log(p)} for t, p in others.items()]
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": letter},
                         "logprobs": {"content": [{"token": letter, "logprob": math.log(0.7),
                                                   "top_logprobs": top}]}}]}


def text_answer(text):
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/health":
            return self.reply(200, {"status": "ok"})
        if url.path == "/saw-key":
            key = urllib.parse.parse_qs(url.query).get("key", [""])[0]
            with lock:
                return self.reply(200, {"header": key in keys, "body": any(key in b for b in bodies)})
        if url.path == "/count":
            prompt = urllib.parse.parse_qs(url.query).get("prompt", [""])[0]
            with lock:
                return self.reply(200, {"count": counts.get(prompt, 0)})
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if "model" not in body or "messages" not in body:
            return self.reply(400, {"error": "model and messages are required"})
        prompt = body["messages"][-1]["content"]
        auth = self.headers.get("Authorization", "")
        with lock:
            bodies.append(json.dumps(body))
            if auth:
                keys.add(auth.removeprefix("Bearer "))
        with lock:
            counts[prompt] = counts.get(prompt, 0) + 1
            n = counts[prompt]
        if prompt.startswith("letter="):
            return self.reply(200, logprob_answer(prompt[7]))
        if prompt.startswith("text="):
            return self.reply(200, text_answer(prompt[5:]))
        if prompt == "malformed":
            return self.reply(200, b'{"choices": [ this is not json')
        if prompt.startswith("status="):
            return self.reply(int(prompt[7:]), {"error": {"message": "fake failure"}})
        if prompt.startswith("flaky="):
            if n <= int(prompt[6:]):
                return self.reply(429, {"error": {"message": "slow down"}})
            return self.reply(200, logprob_answer("D"))
        if prompt.startswith("slow="):
            time.sleep(float(prompt[5:]))
            return self.reply(200, logprob_answer("F"))
        if prompt == "noletter":
            return self.reply(200, text_answer("I think it is faster"))
        if prompt.endswith("answer:"):
            last = prompt.rsplit("\n", 1)[-1]
            if "fault=500" in last:
                return self.reply(500, {"error": {"message": "fake failure"}})
            return self.reply(200, logprob_answer("ABCDEFGH"[sum(last.encode()) % 8]))
        self.reply(200, logprob_answer("A"))


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that timed out and hung up is part of the tests


def main():
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
