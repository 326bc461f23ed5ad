"""CloudFormation custom resources: one responder that always answers, in time.

`respond(event, context, work)` runs `work(event, budget)` and PUTs SUCCESS or FAILED to the
pre-signed ResponseURL, whatever happens:

* the time comes from `context.get_remaining_time_in_millis()`: `Budget` keeps a reserve for the
  answer (a quarter of the time, at most ANSWER_RESERVE_S) and hands the work timeouts out of the
  rest (connect, lock, HTTP), so the work ends by itself before the reserve;
* the work runs in a watchdog thread: if it still hangs when its budget is spent (a socket with no
  timeout, a library that ignores one), the answer goes out anyway - FAILED for Create/Update,
  SUCCESS for Delete (a stack must stay deletable);
* an exception becomes FAILED with one line of reason (credentials masked), never a traceback.

Standard library only, so importing it cannot fail with the rest of the layer: the functions import
everything else (Powertools, psycopg, the domain) inside the work. crhelper was the candidate; it
PUTs over HTTPS only (no loopback stand-in for tests), retries an unanswerable URL forever, sleeps
120 s on Delete by default and resets the root logger's level, so this small responder is used.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SUCCESS = "SUCCESS"
FAILED = "FAILED"
ANSWER_RESERVE_S = 5.0
ANSWER_RESERVE_SHARE = 0.25
UNKNOWN_CONTEXT_S = 30.0  # a hand-made context without get_remaining_time_in_millis
MAX_REASON_CHARS = 400
PUT_TIMEOUT_S = 10.0

logger = logging.getLogger("sommelier.deploy.custom_resource")


class OutOfTime(TimeoutError):
    """The work's share of the function's time is spent."""


class Budget:
    """The function's remaining time, split into the work's share and a reserve for the answer."""

    def __init__(self, context: Any, *, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        remaining_ms = getattr(context, "get_remaining_time_in_millis", None)
        try:
            total = max(0.0, float(remaining_ms()) / 1000) if callable(remaining_ms) else UNKNOWN_CONTEXT_S
        except Exception:
            total = UNKNOWN_CONTEXT_S
        now = clock()
        self.total_s = total
        self.reserve_s = min(ANSWER_RESERVE_S, total * ANSWER_RESERVE_SHARE)
        self.work_deadline = now + total - self.reserve_s
        self.answer_deadline = now + total

    def remaining(self) -> float:
        """Seconds left for the work."""
        return max(0.0, self.work_deadline - self._clock())

    def timeout(self, at_most: float) -> float:
        """A timeout for the next step: at most `at_most`, never past the work's share. OutOfTime when spent."""
        left = self.remaining()
        if left <= 0:
            raise OutOfTime("the time left for this step is spent")
        return min(at_most, left)

    def answer_time_left(self) -> float:
        return max(0.0, self.answer_deadline - self._clock())


@dataclass
class Outcome:
    status: str
    reason: str
    physical_id: str
    data: dict[str, str] = field(default_factory=dict)


def one_line(exc: BaseException, *secrets: str | None) -> str:
    """`Type: first line of the message`, credentials masked, bounded for CloudFormation's Reason."""
    first_line = (str(exc).strip().splitlines() or [""])[0]
    text = f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
    for value in secrets:
        if value:
            text = text.replace(value, "***")
    try:
        from sommelier.observability.redaction import redact  # standard library only, like this module

        text = redact(text)
    except Exception:  # nosec B110 - the explicit secrets above are masked already
        pass
    return text[:MAX_REASON_CHARS]


Work = Callable[[dict[str, Any], Budget], Outcome]


def respond(
    event: dict[str, Any],
    context: Any,
    work: Work,
    *,
    physical_id: str,
    failed_create_id: str | None = None,
) -> Outcome:
    """Run `work` within the budget and answer CloudFormation. Never raises."""
    budget = Budget(context)
    request_type = event.get("RequestType") if isinstance(event, dict) else None
    current_id = (event.get("PhysicalResourceId") if isinstance(event, dict) else None) or physical_id
    failed_id = failed_create_id if request_type == "Create" and failed_create_id else current_id
    box: list[Outcome] = []

    def guarded() -> None:
        try:
            box.append(work(event, budget))
        except Exception as exc:  # every failure is an answer, never an escape
            logger.error("custom resource %s failed: %s", request_type, one_line(exc))
            box.append(Outcome(FAILED, one_line(exc), failed_id))

    worker = threading.Thread(target=guarded, name="custom-resource-work", daemon=True)
    worker.start()
    worker.join(budget.remaining())
    if box:
        outcome = box[0]
    elif request_type == "Delete":
        outcome = Outcome(SUCCESS, "Delete did not finish in its time budget; the resource is left as is", current_id)
    else:
        seconds = budget.total_s - budget.reserve_s
        outcome = Outcome(FAILED, f"did not finish within its {seconds:.0f} s budget", failed_id)
    log_stream = getattr(context, "log_stream_name", None)
    if log_stream:
        outcome.reason = f"{outcome.reason}. Log stream: {log_stream}"
    send(event, outcome, budget)
    return outcome


def send(event: dict[str, Any], outcome: Outcome, budget: Budget) -> bool:
    """PUT the answer to the pre-signed ResponseURL, retrying while the function has time. True when sent."""
    url = event.get("ResponseURL") if isinstance(event, dict) else None
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        logger.error("the event has no usable ResponseURL; nothing to answer (status %s)", outcome.status)
        return False
    body = json.dumps(
        {
            "Status": outcome.status,
            "Reason": outcome.reason[: MAX_REASON_CHARS + 200],
            "PhysicalResourceId": outcome.physical_id,
            "StackId": event.get("StackId"),
            "RequestId": event.get("RequestId"),
            "LogicalResourceId": event.get("LogicalResourceId"),
            "Data": outcome.data,
        }
    ).encode()
    # The URL is signed without a content type: send an empty one (urllib would add its own).
    request = urllib.request.Request(
        url, data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    attempt = 0
    while True:
        attempt += 1
        left = budget.answer_time_left()
        try:
            with urllib.request.urlopen(request, timeout=max(0.5, min(PUT_TIMEOUT_S, left))) as response:  # nosec B310 - the pre-signed ResponseURL CloudFormation sent us
                logger.info("answered CloudFormation: %s (HTTP %s)", outcome.status, response.status)
                return True
        except Exception as exc:
            pause = min(float(attempt), 2.0)
            logger.warning("could not answer CloudFormation (attempt %s): %s", attempt, type(exc).__name__)
            if budget.answer_time_left() <= pause + 0.5 or attempt >= 5:
                logger.error("gave up answering CloudFormation; its ServiceTimeout ends the wait")
                return False
            time.sleep(pause)
