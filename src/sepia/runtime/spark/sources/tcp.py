"""The socket source: Sepia connects to a TCP server that writes a stream, like a file.

The bytes are a stream file's (TriG or N-Quads, io.md), cut into documents by blank lines:
each block between blank lines must be a complete document (its own prefixes, each element's
graph and time statements together), parsed by Sepia's reader. A blank line is therefore the
sender's "flush": N-Quads writers put one after each element or group of elements, TriG
writers after each document. When the server closes the connection, the block in progress
is the last document and the stream has ended (the query keeps running, with no new data).
Offsets number the documents received (see `push` for what a restart means: a socket has no
replay at all).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping

from pyspark.sql.datasource import DataSource, DataSourceStreamReader
from pyspark.sql.types import StructType

from sepia.runtime.spark.ingest import INGEST_DDL
from sepia.runtime.spark.sources.push import Inbox, PushStreamReader, required_option


class SocketSource(DataSource):
    """`spark.readStream.format("sepia-socket")`: options host, port, stream (the stream IRI),
    format (trig or nquads), allowedLateness, connectTimeout."""

    @classmethod
    def name(cls) -> str:
        return "sepia-socket"

    def schema(self) -> str:
        return INGEST_DDL

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return SocketReader(self.options)


class SocketReader(PushStreamReader):
    """Reads documents from one TCP connection until the server closes it."""

    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self.host = options.get("host", "localhost")
        self.port = int(required_option(options, "port"))

    @property
    def source(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    def receive(self, inbox: Inbox) -> Callable[[], None]:
        try:
            connection = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except OSError as error:
            raise ConnectionError(f"cannot connect to {self.source}: {error}") from error
        connection.settimeout(None)
        threading.Thread(
            target=_pump, args=(connection, inbox), name=f"sepia {self.source}", daemon=True
        ).start()
        return lambda: _hang_up(connection)


def blank_line_documents(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The blocks of non-blank lines, each a document, the last one ended by the input's end."""
    block: list[bytes] = []
    for line in lines:
        if line.strip():
            block.append(line)
        elif block:
            yield b"".join(block)
            block = []
    if block:
        yield b"".join(block)


def _pump(connection: socket.socket, inbox: Inbox) -> None:
    """The receiving thread: documents into the inbox until the connection ends."""
    with contextlib.suppress(OSError), connection.makefile("rb") as lines:
        # OSError: we hung up (the query stopped) or the peer reset; the stream ends here
        for document in blank_line_documents(lines):
            inbox.put(document)


def _hang_up(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the server
        connection.shutdown(socket.SHUT_RDWR)
    connection.close()
