"""A step's map-state changes sent to Spark's state server in one exchange.

PySpark's `MapState.updateValue` and `removeKey` each send one request to the JVM's state
server and wait for its answer. A live W1 batch changes about 70 entries (the snapshot
parts of its windows, new terms), and those round trips were half the stateful worker's
busy time on the shared 2-core machine (py-spy: 408 of 854 samples under `updateValue`,
mostly waiting for the JVM's server thread to be scheduled). The server answers its
requests in the order it reads them, so here the requests of up to `WINDOW` changes are
written first and their answers read after (a few bytes each, they wait in the socket's
buffer meanwhile): the same requests, the same order, one wait. Where PySpark's client
lacks the pieces used (another PySpark version), each change goes through the public calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.errors import PySparkRuntimeError
from pyspark.sql.streaming.stateful_processor import MapState

WINDOW = 256
"""Changes whose requests are written before their answers are read."""
CLIENT_CALLS = ("_send_proto_message", "_receive_proto_message", "_serialize_to_bytes")


def write_changes(table: MapState, entries: Mapping[str, tuple | None]) -> None:
    """Set each entry's value in the map (by its string key), remove those with None."""
    client = getattr(table, "_mapStateClient", None)
    api = getattr(client, "_stateful_processor_api_client", None)
    if not all(hasattr(api, name) for name in CLIENT_CALLS) or not hasattr(table, "_stateName"):
        for key, value in entries.items():
            if value is None:
                table.removeKey((key,))
            else:
                table.updateValue((key,), value)
        return
    changes = list(entries.items())
    for start in range(0, len(changes), WINDOW):
        window = changes[start : start + WINDOW]
        for key, value in window:
            api._send_proto_message(_request(client, table._stateName, key, value))
        for key, value in window:
            status, error, _ = api._receive_proto_message()
            if status != 0:
                doing = "removing" if value is None else "updating"
                raise PySparkRuntimeError(f"Error {doing} map state key {key!r}: {error}")


def _request(client: Any, state: str, key: str, value: tuple | None) -> bytes:
    """The request PySpark's `MapStateClient.update_value` (or `remove_key`) sends."""
    import pyspark.sql.streaming.proto.StateMessage_pb2 as messages

    api = client._stateful_processor_api_client
    key_bytes = api._serialize_to_bytes(client.user_key_schema, (key,))
    if value is None:
        remove = messages.RemoveKey(userKey=key_bytes)
        call = messages.MapStateCall(stateName=state, removeKey=remove)
    else:
        value_bytes = api._serialize_to_bytes(client.value_schema, value)
        update = messages.UpdateValue(userKey=key_bytes, value=value_bytes)
        call = messages.MapStateCall(stateName=state, updateValue=update)
    request = messages.StateVariableRequest(mapStateCall=call)
    return messages.StateRequest(stateVariableRequest=request).SerializeToString()
