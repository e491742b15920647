"""The local fake Anthropic endpoint (trace_envs.llm.fake_server) extended with the Message Batches
routes the SDK uses: create (POST /v1/messages/batches), retrieve (GET …/{id}) and results
(GET …/{id}/results, JSONL). Batches report ``in_progress`` for ``polls_before_end`` retrieves."""

from __future__ import annotations

import itertools
import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from trace_envs.llm.fake_server import FakeModelServer, FakeReply, FakeRequest, _messages_from_wire


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

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        base = super()._handler_class()
        server = self

        class Handler(base):  # type: ignore[valid-type,misc]
            def do_POST(self) -> None:
                if self.path.rstrip("/").endswith("/messages/batches"):
                    length = int(self.headers.get("content-length") or 0)
                    body = json.loads(self.rfile.read(length) or b"{}")
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    self._send(200, {}, server._create_batch(body, headers))
                    return
                super().do_POST()

            def do_GET(self) -> None:
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if "batches" not in parts:
                    self._send(404, {}, {"error": {"message": f"no route {self.path}"}})
                    return
                batch_id = parts[parts.index("batches") + 1]
                if batch_id not in server.batches:
                    self._send(404, {}, {"type": "error", "error": {"type": "not_found_error", "message": "no batch"}})
                    return
                if parts[-1] == "results":
                    data = "".join(json.dumps(r) + "\n" for r in server.batches[batch_id]["results"]).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/binary")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                server.batches[batch_id]["polls"] += 1
                self._send(200, {}, server._batch_body(batch_id))

        return Handler


__all__ = ["FakeBatchServer", "FakeReply"]
