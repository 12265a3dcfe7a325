"""A ``--scheduler`` address checked before Dask's client is given it
(:func:`check_scheduler`): Dask's client waits a minute for a server that accepts and says
nothing, and reads an HTTP answer as the size of a message to allocate ("MemoryError: Unable
to allocate 3.85 EiB"); here either is refused within :data:`SCHEDULER_TIMEOUT` seconds,
naming the address and what was wrong. Standard library only.
"""
from __future__ import annotations

import re
import socket
import struct
import time

#: Seconds a scheduler has to accept a connection and send Dask's first message, together.
SCHEDULER_TIMEOUT = 5.0
#: The largest first message of a Dask scheduler believed (its handshake is a few hundred bytes).
SCHEDULER_FIRST_MESSAGE_BYTES = 1 << 20
_SCHEDULER_ADDRESS = re.compile(r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
                                r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]@?#]+):(?P<port>\d{1,5})/?$")


def check_scheduler(address: str, timeout: float | None = None) -> str:
    """The scheduler address ``address`` once it looks like a Dask scheduler's, within
    ``timeout`` seconds (default :data:`SCHEDULER_TIMEOUT`): ``[tcp://]HOST:PORT`` (or
    ``tls://``, not probed), a port 1..65535, a host that resolves, a connection accepted,
    and (``tcp``) a first message in Dask's framing (an 8-byte little-endian length of at most
    :data:`SCHEDULER_FIRST_MESSAGE_BYTES`). Returns the address with its scheme (``tcp://`` by default).

    Raises:
        ValueError: a malformed address, an unknown scheme. OSError: no such host, nothing
        listening, or a server that does not answer as a Dask scheduler in time; each message
        names the address and what was wrong.
    """
    timeout = SCHEDULER_TIMEOUT if timeout is None else float(timeout)
    deadline = time.monotonic() + timeout
    found = _SCHEDULER_ADDRESS.match(address.strip()) if isinstance(address, str) else None
    if found is None:
        raise ValueError(f"--scheduler {address!r}: not a scheduler address; expected tcp://HOST:PORT "
                         f"(e.g. tcp://10.0.0.5:8786)")
    scheme = (found.group("scheme") or "tcp").lower()
    host, port = found.group("host").strip("[]"), int(found.group("port"))
    if scheme not in ("tcp", "tls"):
        hint = " (an http address is the dashboard's; the scheduler's is tcp://HOST:8786)" if scheme.startswith(
            "http") else ""
        raise ValueError(f"--scheduler {address!r}: the scheme {scheme!r} is not one a Dask scheduler speaks; "
                         f"expected tcp:// or tls://{hint}")
    if not 1 <= port <= 65535:
        raise ValueError(f"--scheduler {address!r}: port {port} is not in 1..65535")
    normal = f"{scheme}://{found.group('host')}:{port}"
    if scheme == "tls":
        return normal  # the TLS handshake is Dask's own, bounded by the Client's timeout
    try:
        conn = socket.create_connection((host, port), timeout=timeout)
    except socket.gaierror as exc:
        raise OSError(f"--scheduler {address!r}: the host {host!r} is not known ({exc.strerror})") from None
    except (socket.timeout, TimeoutError):
        raise OSError(f"--scheduler {address!r}: no answer to a connection within {timeout:g} s") from None
    except OSError as exc:
        raise OSError(f"--scheduler {address!r}: the connection was refused or failed "
                      f"({exc.strerror or exc}): is the scheduler running?") from None
    with conn:
        first = b""
        try:
            while len(first) < 8:
                conn.settimeout(max(deadline - time.monotonic(), 1e-3))
                chunk = conn.recv(8 - len(first))
                if not chunk:
                    break
                first += chunk
        except (socket.timeout, TimeoutError):
            raise OSError(f"--scheduler {address!r}: accepted the connection but sent nothing within {timeout:g} s "
                          f"(a Dask scheduler speaks first): not a Dask scheduler, or a stuck one") from None
        except OSError as exc:
            raise OSError(f"--scheduler {address!r}: the connection failed ({exc.strerror or exc})") from None
    if len(first) < 8:
        raise OSError(f"--scheduler {address!r}: closed the connection after {len(first)} bytes: not a Dask "
                      f"scheduler")
    (length,) = struct.unpack("<Q", first)
    if not 0 < length <= SCHEDULER_FIRST_MESSAGE_BYTES:
        raise OSError(f"--scheduler {address!r}: answered {first!r}, which is not Dask's protocol (a message of "
                      f"{length} bytes): not a Dask scheduler")
    return normal
