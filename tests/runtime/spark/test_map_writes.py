"""A step's map-state changes go to the state server as the same requests PySpark's own
`updateValue` / `removeKey` send, in the same order, their answers read after a window of
requests instead of after each (`map_writes`)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from pyspark.errors import PySparkRuntimeError
from pyspark.serializers import CPickleSerializer
from pyspark.sql.streaming.map_state_client import MapStateClient
from pyspark.sql.streaming.proto.StateMessage_pb2 import StateRequest
from pyspark.sql.streaming.stateful_processor import MapState
from pyspark.sql.streaming.stateful_processor_api_client import StatefulProcessorApiClient
from pyspark.sql.types import StringType, StructField, StructType

from sepia.runtime.spark import map_writes
from sepia.runtime.spark.map_writes import write_changes


class FakeServer:
    """The client side of the state server's socket: requests applied to a dict in the
    order sent, each answered with `status` (0: done)."""

    pickleSer = CPickleSerializer()
    _serialize_to_bytes = StatefulProcessorApiClient._serialize_to_bytes

    def __init__(self, status: int = 0) -> None:
        self.events: list[Any] = []
        self.stored: dict[tuple, tuple] = {}
        self.status = status

    def _send_proto_message(self, message: bytes) -> None:
        self.events.append(message)
        call = StateRequest.FromString(message).stateVariableRequest.mapStateCall
        if call.HasField("updateValue"):
            key = tuple(pickle.loads(call.updateValue.userKey))
            self.stored[key] = tuple(pickle.loads(call.updateValue.value))
        else:
            self.stored.pop(tuple(pickle.loads(call.removeKey.userKey)), None)

    def _receive_proto_message(self) -> tuple[int, str, bytes]:
        self.events.append("answer")
        return self.status, "" if self.status == 0 else "broken", b""


def _table(server: FakeServer) -> MapState:
    key = StructType([StructField("key", StringType())])
    value = StructType([StructField("rows", StringType())])
    return MapState(MapStateClient(server, key, value), "engine_parts")  # type: ignore[arg-type]


CHANGES = {"a": ("one",), "b": None, "c": ("three",), "d": ("four",), "e": None}


def test_the_requests_are_pysparks_own_in_order_answers_read_after_them() -> None:
    own, ours = FakeServer(), FakeServer()
    for key, value in CHANGES.items():
        if value is None:
            _table(own).removeKey((key,))
        else:
            _table(own).updateValue((key,), value)
    write_changes(_table(ours), CHANGES)
    assert [e for e in ours.events if e != "answer"] == [e for e in own.events if e != "answer"]
    assert own.events[1::2] == ["answer"] * 5  # PySpark waits for each answer
    assert ours.events[5:] == ["answer"] * 5  # here: five requests, then five answers
    assert ours.stored == own.stored == {("a",): ("one",), ("c",): ("three",), ("d",): ("four",)}


def test_answers_are_read_after_each_window_of_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(map_writes, "WINDOW", 2)
    server = FakeServer()
    write_changes(_table(server), CHANGES)
    shape = ["answer" if e == "answer" else "request" for e in server.events]
    assert shape == ["request", "request", "answer", "answer"] * 2 + ["request", "answer"]


def test_a_refused_change_fails_the_step() -> None:
    with pytest.raises(PySparkRuntimeError, match="updating map state key 'a': broken"):
        write_changes(_table(FakeServer(status=1)), CHANGES)


def test_without_pysparks_client_pieces_each_change_goes_through_the_public_calls() -> None:
    class Table:
        def __init__(self) -> None:
            self.calls: list[tuple] = []

        def updateValue(self, key: tuple, value: tuple) -> None:
            self.calls.append(("update", key, value))

        def removeKey(self, key: tuple) -> None:
            self.calls.append(("remove", key))

    table = Table()
    write_changes(table, {"a": ("one",), "b": None})  # type: ignore[arg-type]
    assert table.calls == [("update", ("a",), ("one",)), ("remove", ("b",))]
