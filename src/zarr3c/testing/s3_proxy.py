"""A small HTTP reverse proxy for object-store tests and benchmarks: fixed latency per request,
request counts by kind, and injected faults.

Put it in front of a local S3 server (moto in server mode) and point clients at
:attr:`LatencyProxy.endpoint` instead of the server: every request then waits ``latency``
seconds before it is forwarded (as a request to a cloud region does), is counted by kind
(:data:`KINDS`), and may be answered with an HTTP error or a dropped connection instead
(:meth:`LatencyProxy.fail`).  What users of object stores see is the number of requests and
how many are in flight, not the local server's speed: the latency makes that visible.

- Requests are counted when they arrive, and leave the count of requests in flight just
  before they are answered, so that a client never sees an answer its counts lack.
- With ``bandwidth`` set, every answer's body is sent at most that many bytes a second (as
  one request's stream from S3 is bounded), so that reading bytes nobody needs costs time.
- Requests are served on threads of their own (``ThreadingHTTPServer``), so concurrent
  requests wait out their latency together; bodies are streamed both ways, never buffered
  whole.  Clients keep their connections open (HTTP/1.1), as they would to S3.
- The ``Host`` header is forwarded unchanged, so the upstream server sees what the client
  signed (AWS Signature V4 signs it).
- A fault answers before the upstream server sees the request, so it never changes stored
  data: an injected failure of a ``PUT`` leaves the object as it was.  (A fault that cuts an
  answer short, ``cut_after``, forwards the request first.)
- Paths below ``/_proxy/`` (no S3 bucket name starts with ``_``) control a proxy running in
  another process (:func:`main`): ``GET /_proxy/counts`` returns the counts and the peak of
  requests in flight as JSON (``{"counts": {...}, "peak_in_flight": n}``),
  ``POST /_proxy/reset`` clears them, ``POST /_proxy/latency`` with a body of seconds sets
  the latency, ``POST /_proxy/bandwidth`` with a body of bytes per second (0: none) the
  bandwidth.

Which kind a request is (the S3 REST API, https://docs.aws.amazon.com/AmazonS3/latest/API/):
``GET`` of an object with a ``Range`` header is ``"GET range"``, without one ``"GET"``; a
``GET`` of a bucket (``list-type=2``, ``prefix``, ``delimiter``) is ``"LIST"``; ``DELETE`` and
the bulk delete ``POST ?delete`` are ``"DELETE"``; multipart uploads' ``POST`` (create,
complete) is ``"POST"``; ``PUT`` (a part of a multipart upload too) and ``HEAD`` are
themselves.

Run it as a process with ``python -m zarr3c.testing.s3_proxy UPSTREAM --latency 0.02``; it
prints its endpoint and serves until killed.
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import json
import re
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Self
from urllib.parse import parse_qs, urlsplit

__all__ = ["KINDS", "Fault", "LatencyProxy", "RequestRecord", "main", "request_kind"]

#: The kinds requests are counted by.
KINDS = ("GET", "GET range", "PUT", "HEAD", "LIST", "DELETE", "POST")

#: Where a proxy in another process is controlled (S3 bucket names cannot start with "_").
CONTROL_PREFIX = "/_proxy/"

#: Bytes copied at a time while streaming a body.
_BLOCK = 1 << 16

# Hop-by-hop headers (RFC 9110, section 7.6.1) are the proxy's own, never forwarded.
_HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
    "trailer", "transfer-encoding", "upgrade",
})


class RequestRecord(NamedTuple):
    """One request the proxy received."""

    #: The HTTP method.
    method: str
    #: Its kind (one of :data:`KINDS`).
    kind: str
    #: The path, without the query (``/bucket/key``).
    path: str
    #: The ``Range`` header, or None.
    range: str | None
    #: The status sent back (an injected one too); None for a dropped connection (or while
    #: the request is in flight).
    status: int | None


@dataclass
class Fault:
    """Requests to fail instead of forwarding them.

    Parameters
    ----------
    status
        The HTTP status to answer with (an S3 XML error body goes with it), or None to drop
        the connection: without an answer, or after ``cut_after`` bytes of one.
    times
        How many matching requests fail (None: every one, until :meth:`LatencyProxy.clear`).
    pattern
        A regular expression searched in the request's path (``/bucket/key``); None: any.
    kinds
        Only requests of these kinds fail (:data:`KINDS`); empty: any kind.
    cut_after
        With ``status`` None: forward the request, send the server's answer (its status,
        headers and declared length) and only this many bytes of its body, then close the
        connection (a response cut short); None: answer nothing.

    Examples
    --------
    >>> Fault(status=503, times=1, pattern=r"/c/0/0$").matches("GET", "/b/x/c/0/0")
    True
    >>> Fault(kinds=("PUT",)).matches("GET", "/b/x")
    False
    """

    status: int | None = 500
    times: int | None = 1
    pattern: str | None = None
    kinds: tuple[str, ...] = ()
    cut_after: int | None = None
    _regex: re.Pattern[str] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self._regex = re.compile(self.pattern) if self.pattern is not None else None

    def matches(self, kind: str, path: str) -> bool:
        """Whether a request of ``kind`` to ``path`` is one this fault fails.

        Parameters
        ----------
        kind
            The request's kind (:data:`KINDS`).
        path
            The request's path, without the query.

        Returns
        -------
        bool

        Examples
        --------
        >>> Fault(pattern="zarr.json").matches("GET", "/b/zarr.json")
        True
        """
        if self.times is not None and self.times <= 0:
            return False
        if self.kinds and kind not in self.kinds:
            return False
        return self._regex is None or self._regex.search(path) is not None


def request_kind(method: str, target: str, has_range: bool) -> str:
    """The kind (:data:`KINDS`) of an S3 request.

    Parameters
    ----------
    method
        The HTTP method.
    target
        The request target: path and query (``/bucket/key?partNumber=1``).
    has_range
        Whether it has a ``Range`` header.

    Returns
    -------
    str

    Examples
    --------
    >>> request_kind("GET", "/b/c/0", True), request_kind("GET", "/b?list-type=2", False)
    ('GET range', 'LIST')
    >>> request_kind("POST", "/b?delete", False), request_kind("POST", "/b/k?uploads", False)
    ('DELETE', 'POST')
    """
    parts = urlsplit(target)
    query = parse_qs(parts.query, keep_blank_values=True)
    if method == "GET":
        # a bucket's path has no key: "/bucket" or "/bucket/"
        if "list-type" in query or parts.path.strip("/").count("/") == 0:
            return "LIST"
        return "GET range" if has_range else "GET"
    if method == "POST" and "delete" in query:
        return "DELETE"
    return method if method in KINDS else "POST"


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    proxy: LatencyProxy
    # Clients open tens of connections at once (tensorstore: one per request in flight); a
    # full listen backlog drops SYNs, which clients resend only after a second.
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client hung up (a cancelled request): nothing to report
        super().handle_error(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    """Forwards one connection's requests to the upstream server."""

    protocol_version = "HTTP/1.1"  # keep-alive, as clients of S3 expect
    # The headers and the body go out as separate writes: with Nagle's algorithm the body
    # would wait for the client's delayed ACK (40 ms on Linux), a latency of the proxy's own.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests and benchmarks read the counts, not a log

    def do_GET(self) -> None:
        self._handle()

    do_PUT = do_HEAD = do_POST = do_DELETE = do_GET

    def _handle(self) -> None:
        proxy = self.server.proxy
        if self.path.startswith(CONTROL_PREFIX):
            self._control(proxy)
            return
        kind = request_kind(self.command, self.path, "Range" in self.headers)
        entry = proxy._arrived(RequestRecord(self.command, kind, urlsplit(self.path).path,
                                             self.headers.get("Range"), None))
        try:
            fault = proxy._take_fault(kind, entry.record.path)
            if proxy.latency > 0:
                time.sleep(proxy.latency)
            if fault is not None and fault.cut_after is not None and fault.status is None:
                self._forward(proxy, entry, cut_after=fault.cut_after)
            elif fault is not None:
                self._fail(fault, entry)
            else:
                self._forward(proxy, entry)
        finally:
            proxy._answered(entry, entry.record.status)

    def _request_body(self) -> _Limited | bytes | None:
        """The request's body, streamed where its length is known; a chunked one is read
        whole (clients of S3 send lengths, except for some streaming uploads)."""
        length = self.headers.get("Content-Length")
        if length is not None:
            return _Limited(self.rfile, int(length)) if int(length) else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return None

    def _forward(self, proxy: LatencyProxy, entry: _Entry, cut_after: int | None = None
                 ) -> None:
        body = self._request_body()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        if isinstance(body, bytes):
            headers["Content-Length"] = str(len(body))
        # One upstream connection per request: moto's server (werkzeug) answers HTTP/1.0
        # and closes each connection anyway, and a fresh one is never found stale.
        conn = http.client.HTTPConnection(proxy._upstream_host, proxy._upstream_port,
                                          timeout=120)
        try:
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as above
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
        except OSError:
            conn.close()
            self.close_connection = True
            proxy._answered(entry, 502)
            self.send_error(502, "upstream unreachable")
            return
        # counted before the client can see the answer (and send its next request)
        proxy._answered(entry, response.status if cut_after is None else None)
        self.send_response_only(response.status, response.reason)
        length = response.getheader("Content-Length")
        no_body = self.command == "HEAD" or response.status in (204, 304)
        for name, value in response.getheaders():
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        if length is None and not no_body:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        bandwidth, sent, began = proxy.bandwidth, 0, time.monotonic()
        try:
            while True:
                block = response.read(_BLOCK)
                if not block:
                    break
                if bandwidth:
                    sent += len(block)
                    time.sleep(max(0.0, began + sent / bandwidth - time.monotonic()))
                if cut_after is not None:
                    self.wfile.write(block[:cut_after])
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if length is None:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                else:
                    self.wfile.write(block)
            if length is None and not no_body:
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        finally:
            response.close()
            conn.close()

    def _fail(self, fault: Fault, entry: _Entry) -> None:
        if self.headers.get("Expect", "").lower() != "100-continue":
            # read the body, so that the client sees the answer rather than a reset
            body = self._request_body()
            if body is not None and not isinstance(body, bytes):
                while body.read(_BLOCK):
                    pass
        self.server.proxy._answered(entry, fault.status)
        if fault.status is None:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        code = {500: "InternalError", 503: "SlowDown"}.get(fault.status, "InjectedFault")
        payload = (
            f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
            f"<Message>injected by the test proxy</Message></Error>"
        ).encode()
        self.send_response_only(fault.status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()

    def _control(self, proxy: LatencyProxy) -> None:
        what = self.path[len(CONTROL_PREFIX):]
        body = self._request_body()
        data = body if isinstance(body, bytes) else body.read() if body is not None else b""
        if what == "counts":
            payload = json.dumps({"counts": proxy.counts(),
                                  "peak_in_flight": proxy.peak_in_flight()}).encode()
        elif what == "reset" and self.command == "POST":
            proxy.reset()
            payload = b"{}"
        elif what == "latency" and self.command == "POST":
            proxy.latency = float(data)
            payload = b"{}"
        elif what == "bandwidth" and self.command == "POST":
            proxy.bandwidth = float(data) or None
            payload = b"{}"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@dataclass
class _Entry:
    """A request in the proxy's log: its record, completed with the status when answered."""

    record: RequestRecord
    answered: bool = False


class _Limited:
    """The first ``n`` bytes of a stream, as a file (http.client streams it)."""

    def __init__(self, raw: Any, n: int) -> None:
        self._raw, self._left = raw, n

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        size = self._left if size < 0 else min(size, self._left)
        data = self._raw.read(size)
        self._left -= len(data)
        if not data:
            self._left = 0
        return data


class LatencyProxy:
    """A reverse proxy on loopback that delays, counts and fails requests to ``upstream``.

    Parameters
    ----------
    upstream
        The server's base URL (``"http://127.0.0.1:5000"``).
    latency
        Seconds each request waits before it is forwarded.
    bandwidth
        Bytes per second each answer's body is sent at, at most (None: as fast as it comes).
    port
        The port to listen on (0: a free one).

    Raises
    ------
    ValueError
        If ``upstream`` is not an ``http://`` URL.

    Notes
    -----
    Use it as a context manager, or :meth:`start` and :meth:`stop`.  Counting starts at
    :meth:`start`; :meth:`reset` clears the counts and the log.

    Examples
    --------
    >>> import http.server, threading, urllib.request
    >>> class Echo(http.server.BaseHTTPRequestHandler):
    ...     def do_GET(self):
    ...         self.send_response(200); self.send_header("Content-Length", "2")
    ...         self.end_headers(); self.wfile.write(b"ok")
    ...     def log_message(self, *args): pass
    >>> upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    >>> _ = threading.Thread(target=upstream.serve_forever, daemon=True).start()
    >>> with LatencyProxy(f"http://127.0.0.1:{upstream.server_port}", latency=0.01) as proxy:
    ...     urllib.request.urlopen(f"{proxy.endpoint}/b/k").read()
    ...     proxy.fail(Fault(status=503, times=1))
    ...     try:
    ...         urllib.request.urlopen(f"{proxy.endpoint}/b/k")
    ...     except OSError as exc:
    ...         print(exc)
    ...     proxy.counts()
    b'ok'
    HTTP Error 503: Service Unavailable
    {'GET': 2}
    >>> upstream.shutdown()
    """

    def __init__(self, upstream: str, latency: float = 0.0, port: int = 0,
                 bandwidth: float | None = None) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"upstream must be an http:// URL, not {upstream!r}")
        if bandwidth is not None and not bandwidth > 0:
            raise ValueError(f"bandwidth must be a positive number of bytes a second, not "
                             f"{bandwidth!r}")
        self.upstream = upstream.rstrip("/")
        self.latency = float(latency)
        self.bandwidth = None if bandwidth is None else float(bandwidth)
        self._upstream_host = parts.hostname
        self._upstream_port = parts.port or 80
        self._lock = threading.Lock()
        self._log: list[_Entry] = []
        self._faults: list[Fault] = []
        self._in_flight = 0
        self._peak = 0
        self._port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifetime ---------------------------------------------------------------------------

    def start(self) -> Self:
        """Listen on loopback and serve on a daemon thread.

        Returns
        -------
        LatencyProxy
            This proxy.

        Raises
        ------
        OSError
            If the port cannot be bound.

        Examples
        --------
        >>> proxy = LatencyProxy("http://127.0.0.1:9").start()
        >>> proxy.endpoint.startswith("http://127.0.0.1:")
        True
        >>> proxy.stop()
        """
        server = _Server(("127.0.0.1", self._port), _Handler)
        server.proxy = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="s3-proxy",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket.

        Examples
        --------
        >>> LatencyProxy("http://127.0.0.1:9").start().stop()
        """
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        """The URL clients use instead of the upstream server's.

        Examples
        --------
        >>> with LatencyProxy("http://127.0.0.1:9") as proxy:
        ...     proxy.endpoint.startswith("http://127.0.0.1:")
        True
        """
        if self._server is None:
            raise RuntimeError("the proxy is not running: call start()")
        return f"http://127.0.0.1:{self._server.server_port}"

    # -- counts and faults ------------------------------------------------------------------

    def requests(self) -> list[RequestRecord]:
        """The requests received since the last :meth:`reset`, in order of arrival.

        Returns
        -------
        list of RequestRecord

        Examples
        --------
        >>> LatencyProxy("http://127.0.0.1:9").requests()
        []
        """
        with self._lock:
            return [e.record for e in self._log]

    def counts(self) -> dict[str, int]:
        """How many requests of each kind (:data:`KINDS`) were received since the last
        :meth:`reset`; kinds with none are left out.

        Returns
        -------
        dict

        Examples
        --------
        >>> LatencyProxy("http://127.0.0.1:9").counts()
        {}
        """
        with self._lock:
            return dict(Counter(e.record.kind for e in self._log))

    def peak_in_flight(self) -> int:
        """The most requests served at once since the last :meth:`reset` (a request is in
        flight from its arrival, through its latency, to the end of its answer).

        Returns
        -------
        int

        Examples
        --------
        >>> LatencyProxy("http://127.0.0.1:9").peak_in_flight()
        0
        """
        with self._lock:
            return self._peak

    def reset(self) -> None:
        """Forget the requests received so far and the peak in flight (faults stay: see
        :meth:`clear`).

        Examples
        --------
        >>> LatencyProxy("http://127.0.0.1:9").reset()
        """
        with self._lock:
            self._log.clear()
            self._peak = self._in_flight

    def fail(self, fault: Fault) -> None:
        """Fail the requests that ``fault`` matches, from now on (the first matching fault
        added answers a request).

        Parameters
        ----------
        fault
            Which requests, how often, and how (a status or a dropped connection).

        Examples
        --------
        >>> proxy = LatencyProxy("http://127.0.0.1:9")
        >>> proxy.fail(Fault(status=None, times=2, kinds=("PUT",)))
        """
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        """Remove every fault.

        Examples
        --------
        >>> LatencyProxy("http://127.0.0.1:9").clear()
        """
        with self._lock:
            self._faults.clear()

    @contextmanager
    def failing(self, fault: Fault) -> Iterator[Fault]:
        """Fail the requests that ``fault`` matches while the ``with`` block runs.

        Parameters
        ----------
        fault
            See :meth:`fail`.

        Yields
        ------
        Fault
            ``fault``; its ``times`` counts down as requests fail.

        Examples
        --------
        >>> proxy = LatencyProxy("http://127.0.0.1:9")
        >>> with proxy.failing(Fault(times=None)) as fault:
        ...     fault.times is None
        True
        """
        self.fail(fault)
        try:
            yield fault
        finally:
            with self._lock:
                if fault in self._faults:
                    self._faults.remove(fault)

    def _take_fault(self, kind: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(kind, path):
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    def _arrived(self, record: RequestRecord) -> _Entry:
        entry = _Entry(record)
        with self._lock:
            self._log.append(entry)
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
        return entry

    def _answered(self, entry: _Entry, status: int | None) -> None:
        """The request is answered (or dropped): no longer in flight.  Called before the
        answer is sent, so that a client never sees an answer the counts do not."""
        with self._lock:
            if not entry.answered:
                entry.answered = True
                entry.record = entry.record._replace(status=status)
                self._in_flight -= 1


def main(argv: Sequence[str] | None = None) -> None:
    """Run a proxy until killed: ``python -m zarr3c.testing.s3_proxy UPSTREAM [--latency S]
    [--bandwidth B] [--port N]``; prints its endpoint on one line.  It is controlled over
    HTTP (the module docstring), so that a benchmark's proxy does not share the clients'
    process and GIL.

    Parameters
    ----------
    argv
        The arguments (default: the command line's).

    Raises
    ------
    SystemExit
        On bad arguments.

    Examples
    --------
    >>> main(["--help"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    SystemExit: 0
    """
    parser = argparse.ArgumentParser(prog="python -m zarr3c.testing.s3_proxy",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("upstream", help="the server's base URL, http://host:port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any)")
    parser.add_argument("--bandwidth", type=float, default=None,
                        help="bytes per second of each answer's body (default: no limit)")
    args = parser.parse_args(argv)
    proxy = LatencyProxy(args.upstream, latency=args.latency, port=args.port,
                         bandwidth=args.bandwidth).start()
    print(proxy.endpoint, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        proxy.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
