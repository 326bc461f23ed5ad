"""CloudFormation's pre-signed ResponseURL on loopback: a handler that records every PUT (a custom
resource's answer) in `server.responses`. Subclass it to serve more on the same port."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler


class CloudFormationResponses(BaseHTTPRequestHandler):
    def do_PUT(self):  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length", "0"))
        self.server.responses.append(  # type: ignore[attr-defined]
            {
                "path": self.path,
                "content_type": self.headers.get("Content-Type"),
                "body": json.loads(self.rfile.read(length)),
            }
        )
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):  # keep pytest output quiet
        pass
