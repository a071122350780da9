"""Webhooks from the client's side: register an endpoint, receive a task's
delivery on a receiver on 127.0.0.1, verify it with `verify_webhook` and
with the Standard Webhooks reference library, read the delivery log."""

import http.server
import json
import queue
import threading
import time

import pytest

from marketlab import WebhookVerificationError, verify_webhook
from test_client import sma_cross


class Receiver:
    """Answers 200 to every POST and keeps (headers, body)."""

    def __init__(self):
        self.got: "queue.Queue[tuple[dict, bytes]]" = queue.Queue()
        got = self.got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                got.put((dict(self.headers.items()), body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.fixture()
def receiver():
    r = Receiver()
    yield r
    r.close()


def test_a_task_s_webhook_verifies_like_the_reference_library(client, receiver):
    from standardwebhooks.webhooks import Webhook, WebhookVerificationError as ReferenceError

    endpoint = client.add_webhook(receiver.url, events=["task.finished"])
    secret = endpoint["secret"]
    assert secret.startswith("whsec_")
    try:
        task = client.backtest(sma_cross(12, 26)).wait(timeout=120)
        headers, body = receiver.got.get(timeout=30)
        event = verify_webhook(secret, body, headers)
        assert event == Webhook(secret).verify(body, headers)
        assert event["type"] == "task.finished"
        assert event["data"]["task_id"] == task.id
        assert event["data"]["metrics"]["Total Trades"] == task.result["total_trades"]

        # What the reference library refuses, the client refuses.
        tampered = body.replace(b"SUCCESS", b"FAILURE")
        stale = {**headers, "webhook-timestamp": str(int(headers["webhook-timestamp"]) - 600)}
        other = "whsec_" + "A" * 43 + "="
        for bad_secret, bad_body, bad_headers in [(secret, tampered, headers), (secret, body, stale), (other, body, headers)]:
            with pytest.raises(WebhookVerificationError):
                verify_webhook(bad_secret, bad_body, bad_headers)
            with pytest.raises(ReferenceError):
                Webhook(bad_secret).verify(bad_body, bad_headers)

        # The log says delivered, with the same webhook-id (the receiver
        # answers before the server records the attempt: read until it has).
        deadline = time.monotonic() + 30
        while True:
            log = client.webhook_deliveries(endpoint["id"])
            if (len(log) and log.iloc[0]["status"] == "delivered") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert log.iloc[0]["id"] == headers["webhook-id"]
        assert log.iloc[0]["status"] == "delivered"
        assert endpoint["id"] in set(client.webhooks()["id"])

        # Rotated with an overlap: the delivery verifies with either secret.
        newer = client.rotate_webhook(endpoint["id"], keep_previous_hours=1)["secret"]
        client.backtest(sma_cross(14, 28)).wait(timeout=120)
        headers, body = receiver.got.get(timeout=30)
        assert verify_webhook(newer, body, headers) == verify_webhook(secret, body, headers)
    finally:
        client.delete_webhook(endpoint["id"])
