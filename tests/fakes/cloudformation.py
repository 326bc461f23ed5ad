"""CloudFormation's pre-signed ResponseURL on loopback: a handler that records every PUT (a custom
resource's answer, with the monotonic time it arrived) in `server.responses`. Subclass it to serve
more on the same port. `BudgetedContext` is a Lambda context whose time really runs out, and
`SilentServer` a peer that accepts TCP connections and never says a word."""

from __future__ import annotations

import json
import socket
import time
from http.server import BaseHTTPRequestHandler


class BudgetedContext:
    """A Lambda context with `seconds` to live from its creation (get_remaining_time_in_millis counts down)."""

    function_name = "sommelier-CustomResource-test"
    function_version = "$LATEST"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:sommelier-CustomResource-test"
    aws_request_id = "5f0c2d4e-0000-4000-8000-00000000beef"
    log_group_name = "/aws/lambda/sommelier-CustomResource-test"
    log_stream_name = "2025/01/01/[$LATEST]budget"

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(max(0.0, self.deadline - time.monotonic()) * 1000)


class SilentServer:
    """Listens on loopback: the kernel completes every TCP handshake, nothing ever reads or answers."""

    def __enter__(self) -> SilentServer:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self.port = self._socket.getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        self._socket.close()


class CloudFormationResponses(BaseHTTPRequestHandler):
    def do_PUT(self):  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length", "0"))
        self.server.responses.append(  # type: ignore[attr-defined]
            {
                "path": self.path,
                "content_type": self.headers.get("Content-Type"),
                "body": json.loads(self.rfile.read(length)),
                "received_at": time.monotonic(),
            }
        )
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):  # keep pytest output quiet
        pass
