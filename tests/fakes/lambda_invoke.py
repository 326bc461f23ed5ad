"""A local AWS Lambda Invoke endpoint that serves the real tool-function handler over a socket.

boto3's Lambda client talks to it through `endpoint_url` exactly as to AWS (POST
/2015-03-31/functions/<name>/invocations, the event as the body, the answer as the body), so the
Lambda-invoke adapter is exercised end to end and every invocation is counted. Written by hand
because moto's Lambda runs functions in Docker, which the test machine does not have.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_INVOKE = re.compile(r"^/2015-03-31/functions/(?P<name>[^/]+)/invocations$")


class LocalLambda:
    """Serves one function, `handle(event) -> dict`; `invocations` lists the tool names in order."""

    def __init__(self, function_name: str, handle):
        self.function_name = function_name
        self.handle = handle
        self.invocations: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server method name
                match = _INVOKE.match(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not match or match.group("name") != owner.function_name:
                    self._send(404, {"Type": "User", "message": "Function not found"})
                    return
                try:
                    event: Any = json.loads(body or b"null")
                except ValueError:
                    self._send(400, {"Type": "User", "message": "Invalid JSON"})
                    return
                owner.invocations.append(event.get("tool") if isinstance(event, dict) else None)
                self._send(200, owner.handle(event))

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-Amz-Executed-Version", "$LATEST")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def client(self):
        """A real boto3 Lambda client pointed at this endpoint (dummy credentials, no retries)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "lambda",
            endpoint_url=self.endpoint_url,
            region_name="eu-central-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",  # nosec B106 - a local stand-in, not a credential
            config=Config(retries={"max_attempts": 1}),
        )

    def __enter__(self) -> LocalLambda:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
