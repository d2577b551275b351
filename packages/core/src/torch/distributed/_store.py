"""Key-value stores for rendezvous: :class:`TCPStore` (a server thread in one process, clients
in all), :class:`FileStore` (a file on a shared file system), :class:`HashStore` (this process
only) and :class:`PrefixStore` (a namespace inside another store).

Values are bytes (strings are encoded as UTF-8, as PyTorch does). ``get`` and ``wait`` block
until the keys exist or the store's timeout passes, then raise :class:`DistStoreError`.
"""

from __future__ import annotations

import fcntl
import pickle
import socket
import struct
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from ._errors import DistStoreError

__all__ = ["DistStoreError", "FileStore", "HashStore", "PrefixStore", "Store", "TCPStore"]

_DEFAULT_TIMEOUT = timedelta(seconds=300)


def _as_bytes(value: str | bytes | bytearray) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _seconds(timeout: timedelta | float | None) -> float:
    if timeout is None:
        return _DEFAULT_TIMEOUT.total_seconds()
    return timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)


class _Table:
    """The key-value table and its operations, shared by the TCP server and HashStore; a
    condition variable wakes waiters when keys appear."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.changed = threading.Condition()

    def set(self, key: str, value: bytes) -> None:
        with self.changed:
            self.data[key] = value
            self.changed.notify_all()

    def add(self, key: str, amount: int) -> int:
        with self.changed:
            total = int(self.data.get(key, b"0")) + amount
            self.data[key] = str(total).encode()
            self.changed.notify_all()
            return total

    def compare_set(self, key: str, expected: bytes, desired: bytes) -> bytes:
        with self.changed:
            current = self.data.get(key)
            if (current is None and expected == b"") or current == expected:
                self.data[key] = desired
                self.changed.notify_all()
                return desired
            return expected if current is None else current

    def wait(self, keys: list[str], seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        with self.changed:
            while not all(key in self.data for key in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
            return True

    def get(self, key: str, seconds: float) -> bytes | None:
        return self.data[key] if self.wait([key], seconds) else None

    def check(self, keys: list[str]) -> bool:
        with self.changed:
            return all(key in self.data for key in keys)

    def delete_key(self, key: str) -> bool:
        with self.changed:
            return self.data.pop(key, None) is not None

    def num_keys(self) -> int:
        with self.changed:
            return len(self.data)


class Store:
    """The store interface: ``set``/``get``/``add``/``compare_set``/``wait``/``check``/
    ``delete_key``/``num_keys`` and a timeout for the blocking calls."""

    def __init__(self, timeout: timedelta = _DEFAULT_TIMEOUT) -> None:
        self._timeout = timeout

    @property
    def timeout(self) -> timedelta:
        """How long ``get`` and ``wait`` block before raising."""
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        """Change the blocking calls' timeout."""
        self._timeout = timeout

    def _timed_out(self, keys: list[str]) -> DistStoreError:
        return DistStoreError(f"wait timeout after {self._timeout}: keys {keys} were not set "
                              f"in the store; a process did not reach this point in time")

    # Subclasses implement these.
    def set(self, key: str, value: str | bytes) -> None:
        """Store ``value`` under ``key``."""
        raise NotImplementedError

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting for it to be set (up to the timeout)."""
        raise NotImplementedError

    def add(self, key: str, amount: int) -> int:
        """Add ``amount`` to the integer under ``key`` (0 when missing); the new value."""
        raise NotImplementedError

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        """Set ``key`` to ``desired_value`` if it holds ``expected_value`` (or is missing and
        ``expected_value`` is empty); the value it holds afterwards."""
        raise NotImplementedError

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        """Block until every key is set; raise :class:`DistStoreError` after the timeout."""
        raise NotImplementedError

    def check(self, keys: list[str]) -> bool:
        """Whether every key is set, without waiting."""
        raise NotImplementedError

    def delete_key(self, key: str) -> bool:
        """Remove ``key``; whether it existed."""
        raise NotImplementedError

    def num_keys(self) -> int:
        """How many keys the store holds."""
        raise NotImplementedError


class HashStore(Store):
    """A store inside this process (threads share it)."""

    def __init__(self) -> None:
        super().__init__()
        self._table = _Table()

    def set(self, key: str, value: str | bytes) -> None:
        self._table.set(key, _as_bytes(value))

    def get(self, key: str) -> bytes:
        value = self._table.get(key, _seconds(self.timeout))
        if value is None:
            raise self._timed_out([key])
        return value

    def add(self, key: str, amount: int) -> int:
        return self._table.add(key, amount)

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        return self._table.compare_set(key, _as_bytes(expected_value), _as_bytes(desired_value))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        if not self._table.wait(list(keys), _seconds(timeout or self.timeout)):
            raise self._timed_out(list(keys))

    def check(self, keys: list[str]) -> bool:
        return self._table.check(list(keys))

    def delete_key(self, key: str) -> bool:
        return self._table.delete_key(key)

    def num_keys(self) -> int:
        return self._table.num_keys()


# TCPStore's wire format: a 4-byte big-endian length, then a pickled tuple (request or reply).
# Only processes of one job talk to it; it is a rendezvous store, not a public service.
def _send(sock: socket.socket, message: Any) -> None:
    payload = pickle.dumps(message)
    sock.sendall(struct.pack(">I", len(payload)) + payload)


def _receive_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError("the TCPStore connection closed")
        chunks += chunk
    return bytes(chunks)


def _receive(sock: socket.socket) -> Any:
    (size,) = struct.unpack(">I", _receive_exactly(sock, 4))
    return pickle.loads(_receive_exactly(sock, size))


# The server's commands: name -> what it does to the table with the request's arguments.
_COMMANDS: dict[str, Callable[..., Any]] = {
    "set": _Table.set, "add": _Table.add, "compare_set": _Table.compare_set,
    "get": _Table.get, "wait": _Table.wait, "check": _Table.check,
    "delete_key": _Table.delete_key, "num_keys": _Table.num_keys,
}


class _TCPServer:
    """The TCPStore server: one listening socket, a thread per client connection."""

    def __init__(self, host: str, port: int) -> None:
        self.table = _Table()
        self.listener = socket.create_server((host, port), family=socket.AF_INET, backlog=128,
                                             reuse_port=False)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, name="TCPStore-server", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # the listener was closed
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            while True:
                try:
                    command, args = _receive(connection)
                except (ConnectionError, OSError, EOFError):
                    return
                _send(connection, _COMMANDS[command](self.table, *args))

    def close(self) -> None:
        self.listener.close()


class TCPStore(Store):
    """A store served over TCP by the process with ``is_master=True`` (it starts a server
    thread on ``host_name:port``; port 0 picks a free one) and reached by every process."""

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = _DEFAULT_TIMEOUT,
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True) -> None:
        super().__init__(timeout)
        self.host = host_name
        self._server = _TCPServer(host_name, port) if is_master else None
        self.port = self._server.port if self._server is not None else port
        self._lock = threading.Lock()  # one request at a time on the shared connection
        self._socket = self._connect()
        if wait_for_workers and world_size is not None and world_size > 0:
            # Every process counts itself in; the master waits until all have joined.
            self.add("__tcpstore_workers", 1)
            if is_master:
                self._wait_for_count("__tcpstore_workers", world_size)

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + _seconds(self.timeout)
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=5)
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as error:
                # The master may not be listening yet: retry until the timeout.
                if time.monotonic() > deadline:
                    raise DistStoreError(f"could not connect to the TCPStore at {self.host}:"
                                         f"{self.port} within {self.timeout}: {error}") from error
                time.sleep(0.05)

    def _wait_for_count(self, key: str, count: int) -> None:
        deadline = time.monotonic() + _seconds(self.timeout)
        while int(self._request("get", key, _seconds(self.timeout)) or b"0") < count:
            if time.monotonic() > deadline:
                raise DistStoreError(f"timed out after {self.timeout} waiting for {count} "
                                     f"processes to join the TCPStore")
            time.sleep(0.01)

    def _request(self, command: str, *args: Any) -> Any:
        with self._lock:
            try:
                _send(self._socket, (command, args))
                return _receive(self._socket)
            except (ConnectionError, OSError) as error:
                raise DistStoreError(f"the TCPStore at {self.host}:{self.port} is gone "
                                     f"({error}): its master process may have exited") from error

    def set(self, key: str, value: str | bytes) -> None:
        self._request("set", key, _as_bytes(value))

    def get(self, key: str) -> bytes:
        value = self._request("get", key, _seconds(self.timeout))
        if value is None:
            raise self._timed_out([key])
        return value

    def add(self, key: str, amount: int) -> int:
        return self._request("add", key, int(amount))

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        return self._request("compare_set", key, _as_bytes(expected_value),
                             _as_bytes(desired_value))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        if not self._request("wait", list(keys), _seconds(timeout or self.timeout)):
            raise self._timed_out(list(keys))

    def check(self, keys: list[str]) -> bool:
        return self._request("check", list(keys))

    def delete_key(self, key: str) -> bool:
        return self._request("delete_key", key)

    def num_keys(self) -> int:
        return self._request("num_keys")

    def __del__(self) -> None:
        sock = getattr(self, "_socket", None)
        if sock is not None:
            sock.close()
        server = getattr(self, "_server", None)
        if server is not None:
            server.close()


class FileStore(Store):
    """A store kept in one file, shared by processes that see the same file system; every
    operation takes an exclusive lock on the file and reads the records appended so far."""

    def __init__(self, file_name: str, world_size: int = -1,
                 timeout: timedelta = _DEFAULT_TIMEOUT) -> None:
        super().__init__(timeout)
        self.path = file_name
        self.world_size = world_size
        with open(self.path, "ab"):
            pass

    def _locked(self, update: Callable[[dict[str, bytes]], tuple[Any, dict[str, bytes]]]) -> Any:
        """Run ``update`` on the current table under the file lock; append what it changed."""
        with open(self.path, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                handle.seek(0)
                table = self._read(handle.read())
                result, changes = update(table)
                for key, value in changes.items():
                    payload = pickle.dumps((key, value))
                    handle.write(struct.pack(">I", len(payload)) + payload)
                handle.flush()
                return result
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @staticmethod
    def _read(content: bytes) -> dict[str, bytes]:
        # The file is a log of (key, value) records; None as a value deletes the key.
        table: dict[str, bytes] = {}
        offset = 0
        while offset + 4 <= len(content):
            (size,) = struct.unpack(">I", content[offset:offset + 4])
            key, value = pickle.loads(content[offset + 4:offset + 4 + size])
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value
            offset += 4 + size
        return table

    def set(self, key: str, value: str | bytes) -> None:
        self._locked(lambda table: (None, {key: _as_bytes(value)}))

    def add(self, key: str, amount: int) -> int:
        def update(table: dict[str, bytes]) -> tuple[int, dict[str, bytes]]:
            total = int(table.get(key, b"0")) + int(amount)
            return total, {key: str(total).encode()}

        return self._locked(update)

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        expected, desired = _as_bytes(expected_value), _as_bytes(desired_value)

        def update(table: dict[str, bytes]) -> tuple[bytes, dict[str, bytes]]:
            current = table.get(key)
            if (current is None and expected == b"") or current == expected:
                return desired, {key: desired}
            return (expected if current is None else current), {}

        return self._locked(update)

    def check(self, keys: list[str]) -> bool:
        return self._locked(lambda table: (all(key in table for key in keys), {}))

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        deadline = time.monotonic() + _seconds(timeout or self.timeout)
        while not self.check(list(keys)):
            if time.monotonic() > deadline:
                raise self._timed_out(list(keys))
            time.sleep(0.01)

    def get(self, key: str) -> bytes:
        self.wait([key])
        return self._locked(lambda table: (table[key], {}))

    def delete_key(self, key: str) -> bool:
        return self._locked(lambda table: (key in table, {key: None} if key in table else {}))

    def num_keys(self) -> int:
        return self._locked(lambda table: (len(table), {}))


class PrefixStore(Store):
    """Every key of ``store`` seen through this one starts with ``prefix + "/"``."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self.prefix = prefix
        self.underlying_store = store

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}"

    def set(self, key: str, value: str | bytes) -> None:
        self.underlying_store.set(self._key(key), value)

    def get(self, key: str) -> bytes:
        return self.underlying_store.get(self._key(key))

    def add(self, key: str, amount: int) -> int:
        return self.underlying_store.add(self._key(key), amount)

    def compare_set(self, key: str, expected_value: str | bytes,
                    desired_value: str | bytes) -> bytes:
        return self.underlying_store.compare_set(self._key(key), expected_value, desired_value)

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        self.underlying_store.wait([self._key(key) for key in keys], timeout)

    def check(self, keys: list[str]) -> bool:
        return self.underlying_store.check([self._key(key) for key in keys])

    def delete_key(self, key: str) -> bool:
        return self.underlying_store.delete_key(self._key(key))

    def num_keys(self) -> int:
        return self.underlying_store.num_keys()

    @property
    def timeout(self) -> timedelta:
        return self.underlying_store.timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self.underlying_store.set_timeout(timeout)
