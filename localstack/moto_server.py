"""moto server with DynamoDB writes applied one at a time.

DynamoDB applies every write to an item atomically (a conditional put or an
update sees the item as the previous write left it). moto's threaded server
runs each request's read-check-write in its own thread without a lock, so two
concurrent conditional writes can both pass their condition. The project's
contract tests check exactly that kind of race (idempotency keys, failure
counts), so this launcher serialises moto's DynamoDB writes; everything else
(SQS long polls included) stays concurrent.

    python localstack/moto_server.py -H 127.0.0.1 -p 4566
"""

import functools
import threading

from moto.dynamodb.models import DynamoDBBackend
from moto.server import main

# Re-entrant: moto's transact_write_items applies its updates through the
# other write methods.
_writes = threading.RLock()

for _name in (
    "put_item",
    "update_item",
    "delete_item",
    "transact_write_items",
    "batch_write_item",
):
    _method = getattr(DynamoDBBackend, _name)

    def _locked(*args, __method=_method, **kwargs):
        with _writes:
            return __method(*args, **kwargs)

    setattr(DynamoDBBackend, _name, functools.wraps(_method)(_locked))

if __name__ == "__main__":
    main()
