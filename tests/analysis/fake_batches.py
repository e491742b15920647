"""The local fake Anthropic endpoint (trace_envs.llm.fake_server) extended with the Message Batches
routes the SDK uses: create (POST /v1/messages/batches), retrieve (GET …/{id}) and results
(GET …/{id}/results, JSONL). Batches report ``in_progress`` for ``polls_before_end`` retrieves."""

from __future__ import annotations

import itertools
import json
from typing import Any

from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest, RouteResult, _messages_from_wire


class FakeBatchServer(FakeModelServer):
    """``FakeModelServer`` plus Message Batches; ``batches`` holds every created batch's requests."""

    def __init__(self, *args: Any, polls_before_end: int = 1, **kwargs: Any):
        self.polls_before_end = polls_before_end
        self.batches: dict[str, dict[str, Any]] = {}
        self._batch_ids = itertools.count(1)
        super().__init__(*args, **kwargs)

    def _batch_body(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        ended = batch["polls"] > self.polls_before_end
        count = len(batch["results"])
        return {
            "id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
            "request_counts": {"processing": 0 if ended else count, "succeeded": count if ended else 0,
                               "errored": 0, "canceled": 0, "expired": 0},
            "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z", "archived_at": None,
            "cancel_initiated_at": None, "ended_at": "2026-01-01T00:01:00Z" if ended else None,
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }  # fmt: skip

    def _create_batch(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        batch_id = f"msgbatch_{next(self._batch_ids):04d}"
        results = []
        for item in body["requests"]:
            params = item["params"]
            request = FakeRequest(
                wire="anthropic", body=params, headers=headers, messages=_messages_from_wire("anthropic", params)
            )
            reply = self.responder(request)
            status, _, message = self._encode("anthropic", request, reply)
            if status >= 400:
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "api_error", "message": reply.error}},
                }
            else:
                result = {"type": "succeeded", "message": message}
            results.append({"custom_id": item["custom_id"], "result": result})
        self.batches[batch_id] = {"requests": body["requests"], "results": results, "polls": 0}
        return self._batch_body(batch_id)

    def route(self, method: str, path: str, headers: dict[str, str], raw_body: bytes) -> RouteResult | None:
        """The batch routes; everything else falls back to the plain server's."""
        parts = path.rstrip("/").split("/")
        if "batches" not in parts:
            return None
        if method == "POST" and parts[-1] == "batches":
            return 200, {}, self._create_batch(json.loads(raw_body or b"{}"), headers)
        at = parts.index("batches") + 1
        batch_id = parts[at] if at < len(parts) else ""
        if method != "GET" or batch_id not in self.batches:
            return 404, {}, {"type": "error", "error": {"type": "not_found_error", "message": "no batch"}}
        if parts[-1] == "results":
            data = "".join(json.dumps(r) + "\n" for r in self.batches[batch_id]["results"]).encode()
            return 200, {"content-type": "application/binary"}, data
        self.batches[batch_id]["polls"] += 1
        return 200, {}, self._batch_body(batch_id)


__all__ = ["FakeBatchServer", "FakeReply"]
