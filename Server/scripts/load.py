#!/usr/bin/env python3
"""The load client of Server/scripts/crash: exact about what it was told, request by request.

  load.py redirect --ports P[,P2] --code CODE --seconds S --out FILE [--workers 16]
      GETs /CODE as a desktop browser (a 302 straight away, its click on disk first) over
      keep-alive connections, spread over the ports; writes the lf_click of every 302 it
      received, one per line. A refused or broken connection is retried on a new one.

  load.py events --ports P[,P2] --key SDK_KEY --install ID --seconds S --out FILE [--workers 16]
      POSTs events, each one unique, and retries every event until it is acknowledged (as the
      SDKs do), for S seconds and then until every event sent is acknowledged or 60 s more have
      passed; then sends every acknowledged event once more (a client that did not see its
      answer). Writes one line per event: its name, and "acked" or "unacked".

Prints one line of counts at the end. Standard library only.
"""
import argparse
import http.client
import json
import re
import sys
import threading
import time


def connect(port):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=5)


class Worker(threading.Thread):
    def __init__(self, index, ports, deadline):
        super().__init__(daemon=True)
        self.index = index
        self.ports = ports
        self.deadline = deadline
        self.connection = None
        self.errors = 0
        self.port_index = index % len(ports)

    def request(self, method, path, body=None, headers=None):
        """The response's status, headers and body, or None when the connection failed."""
        try:
            if self.connection is None:
                self.connection = connect(self.ports[self.port_index])
            self.connection.request(method, path, body=body, headers=headers or {})
            response = self.connection.getresponse()
            data = response.read()
            return response.status, response, data
        except (OSError, http.client.HTTPException):
            self.errors += 1
            if self.connection is not None:
                self.connection.close()
            self.connection = None
            # The server is down or restarting: another port when there is one, a short pause.
            self.port_index = (self.port_index + 1) % len(self.ports)
            time.sleep(0.05)
            return None


class RedirectWorker(Worker):
    browser = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36"

    def __init__(self, index, ports, deadline, code):
        super().__init__(index, ports, deadline)
        self.code = code
        self.clicks = []
        self.other = 0
        self.late = {}  # port: 302s received after --late seconds
        self.late_after = None

    def run(self):
        headers = {"User-Agent": self.browser, "X-Forwarded-For": "203.0.113.%d" % (self.index + 1)}
        while time.monotonic() < self.deadline:
            answer = self.request("GET", "/" + self.code, headers=headers)
            if answer is None:
                continue
            status, response, _ = answer
            location = response.getheader("Location") or ""
            match = re.search(r"[?&]lf_click=([^&]+)", location)
            if status == 302 and match:
                self.clicks.append(match.group(1))
                if self.late_after is not None and time.monotonic() >= self.late_after:
                    port = self.ports[self.port_index]
                    self.late[port] = self.late.get(port, 0) + 1
            else:
                self.other += 1


class EventWorker(Worker):
    def __init__(self, index, ports, deadline, key, install):
        super().__init__(index, ports, deadline)
        self.headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
        self.install = install
        self.sent = []  # names, in order
        self.acked = set()
        self.duplicates_answered = 0
        self.rejected = 0

    def body(self, name):
        return json.dumps({
            "installId": self.install, "eventName": name, "eventData": {"worker": self.index},
            "timestamp": "2026-03-02T08:05:00Z",
        })

    def send(self, name):
        answer = self.request("POST", "/api/sdk/v1/event", body=self.body(name), headers=self.headers)
        if answer is None:
            return False
        status, _, data = answer
        if status == 200 and json.loads(data).get("acknowledged") is True:
            if json.loads(data).get("duplicate") is True:
                self.duplicates_answered += 1
            return True
        self.rejected += 1
        return False

    def run(self):
        counter = 0
        pending = None
        while time.monotonic() < self.deadline:
            if pending is None:
                counter += 1
                pending = "load-%d-%d" % (self.index, counter)
                self.sent.append(pending)
            if self.send(pending):
                self.acked.add(pending)
                pending = None
        # Retries of what was not acknowledged, then every acknowledged event once more.
        last = time.monotonic() + 60
        for name in self.sent:
            while name not in self.acked and time.monotonic() < last:
                if self.send(name):
                    self.acked.add(name)
        for name in list(self.acked):
            self.send(name)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["redirect", "events"])
    parser.add_argument("--ports", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--code")
    parser.add_argument("--key")
    parser.add_argument("--install")
    parser.add_argument("--late", type=float, help="redirect: count 302s per port received after this many seconds")
    arguments = parser.parse_args()
    ports = [int(port) for port in arguments.ports.split(",")]
    deadline = time.monotonic() + arguments.seconds
    if arguments.mode == "redirect":
        workers = [RedirectWorker(index, ports, deadline, arguments.code) for index in range(arguments.workers)]
        if arguments.late is not None:
            for worker in workers:
                worker.late_after = deadline - arguments.seconds + arguments.late
    else:
        workers = [EventWorker(index, ports, deadline, arguments.key, arguments.install) for index in range(arguments.workers)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    errors = sum(worker.errors for worker in workers)
    with open(arguments.out, "w") as out:
        if arguments.mode == "redirect":
            clicks = [click for worker in workers for click in worker.clicks]
            out.write("".join(click + "\n" for click in clicks))
            late = {}
            for worker in workers:
                for port, count in worker.late.items():
                    late[port] = late.get(port, 0) + count
            per_port = "".join("; after %gs, %d from port %d" % (arguments.late, count, port) for port, count in sorted(late.items()))
            print("redirect: %d 302s received, %d other answers, %d failed connections%s" % (
                len(clicks), sum(worker.other for worker in workers), errors, per_port))
        else:
            sent = acked = 0
            for worker in workers:
                for name in worker.sent:
                    out.write("%s %s\n" % (name, "acked" if name in worker.acked else "unacked"))
                sent += len(worker.sent)
                acked += len(worker.acked)
            print("events: %d sent, %d acknowledged, %d answered as duplicates, %d rejected, %d failed connections" % (
                sent, acked, sum(worker.duplicates_answered for worker in workers), sum(worker.rejected for worker in workers), errors))


if __name__ == "__main__":
    sys.exit(main())
