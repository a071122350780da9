"""Verifies webhook deliveries with the Standard Webhooks reference library.

Input (stdin, JSON): {"cases": [{"secret": "whsec_...", "headers": {...},
"body": "..."}]}. Output: one {"ok": bool, "error": str|null, "type": ...}
per case, in order: what a receiver using the library would conclude.
"""

import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def main() -> None:
    cases = json.load(sys.stdin)["cases"]
    out = []
    for case in cases:
        try:
            payload = Webhook(case["secret"]).verify(case["body"], case["headers"])
            out.append({"ok": True, "error": None, "type": payload.get("type")})
        except WebhookVerificationError as e:
            out.append({"ok": False, "error": str(e), "type": None})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
