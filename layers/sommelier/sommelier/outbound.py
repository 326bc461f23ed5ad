"""What every outgoing HTTPS client of the process shares (the Bot API, the model, speech, embeddings).

One TLS context: building one reads the system's CA bundle (about 0.15 s), and a process makes several clients
(each bot, each retry chain, the transcriber). An ``ssl.SSLContext`` is safe to share between clients and threads.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The system's trust store with hostname checks (SSL_CERT_FILE / SSL_CERT_DIR are honoured, as in httpx2)."""
    return ssl.create_default_context()


__all__ = ["tls_context"]
