"""The MQTT source, for IoT users: every message on a topic is a TriG or N-Quads document.

Each message payload holds one or more complete stream elements (io.md: the named graphs
and their time statements in the default graph), parsed by Sepia's reader on an executor.
The subscription is made when the query starts; offsets number the messages received (see
`push` for the exact semantics). MQTT brokers keep no history to replay: a message published
while no query is subscribed is not seen, except that with a `clientId` the session is
persistent (clean session off), so the broker queues QoS 1/2 messages for a stopped query
and delivers them when it comes back. A message received but not yet committed by Spark
when the driver dies is lost either way: the client acknowledged it on receipt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import paho.mqtt.client as mqtt
from pyspark.sql.datasource import DataSource, DataSourceStreamReader
from pyspark.sql.types import StructType

from sepia.runtime.spark.ingest import INGEST_DDL
from sepia.runtime.spark.sources.push import Inbox, PushStreamReader, required_option

DEFAULT_PORT = 1883


class MqttSource(DataSource):
    """`spark.readStream.format("sepia-mqtt")`: options host, port, topic, qos, clientId,
    stream (the stream IRI), format (trig or nquads), allowedLateness, connectTimeout."""

    @classmethod
    def name(cls) -> str:
        return "sepia-mqtt"

    def schema(self) -> str:
        return INGEST_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return MqttReader(self.options)


class MqttReader(PushStreamReader):
    """Subscribes to one topic (MQTT wildcards allowed) and keeps every payload it gets."""

    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self.host = options.get("host", "localhost")
        self.port = int(options.get("port", str(DEFAULT_PORT)))
        self.topic = required_option(options, "topic")
        self.qos = int(options.get("qos", "1"))
        if self.qos not in (0, 1, 2):
            raise ValueError(f"MQTT QoS is 0, 1 or 2, not {self.qos}")
        self.client_id = options.get("clientId", "")

    @property
    def source(self) -> str:
        return f"mqtt://{self.host}:{self.port}/{self.topic}"

    def receive(self, inbox: Inbox) -> Callable[[], None]:
        """Connect, subscribe (again after every reconnection) and wait for the broker's yes."""
        client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            clean_session=not self.client_id,
        )
        granted: list[list[mqtt.ReasonCode]] = []
        subscribed = threading.Event()

        def on_connect(client: mqtt.Client, *_: object) -> None:
            client.subscribe(self.topic, self.qos)

        def on_subscribe(_c: mqtt.Client, _u: object, _mid: int, codes: list, _p: object) -> None:
            granted.append(codes)
            subscribed.set()

        client.on_connect = on_connect
        client.on_subscribe = on_subscribe
        client.on_message = lambda _client, _userdata, message: inbox.put(message.payload)
        try:
            client.connect(self.host, self.port)
        except OSError as error:
            raise ConnectionError(f"cannot reach the MQTT broker {self.source}: {error}") from error
        client.loop_start()
        if not subscribed.wait(self.timeout) or any(c.is_failure for c in granted[0]):
            _disconnect(client)
            raise ConnectionError(f"the MQTT broker did not grant the subscription {self.source}")
        return lambda: _disconnect(client)


def _disconnect(client: mqtt.Client) -> None:
    client.disconnect()
    client.loop_stop()
