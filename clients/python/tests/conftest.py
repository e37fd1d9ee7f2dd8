"""A real Valkey/Redis server per test module on a free loopback port, found
as scripts/lib/servers.sh's bp_server_bin finds it."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def server_bin():
    cached = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / \
        "backpressure/valkey-9/bin/valkey-server"
    if os.access(cached, os.X_OK):
        return str(cached)
    found = shutil.which("valkey-server") or shutil.which("redis-server")
    if not found:
        raise RuntimeError("neither valkey-server nor redis-server found (run scripts/setup.sh)")
    return found


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _port_is_free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


# A cluster node also listens on its bus port, port + 10000, so Valkey
# refuses to start a cluster node on a port above 55535.
MAX_CLUSTER_PORT = 65535 - 10000


def free_cluster_port():
    """A free port for a cluster node: at most MAX_CLUSTER_PORT, its bus port free too."""
    for _ in range(500):
        port = free_port()
        if port <= MAX_CLUSTER_PORT and _port_is_free(port + 10000):
            return port
    raise RuntimeError("no free port <= %d with its cluster bus port free" % MAX_CLUSTER_PORT)


class Server:
    def __init__(self):
        self.port = free_port()
        self.proc = None
        self.start()

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def start(self):
        self.proc = subprocess.Popen(
            [server_bin(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"server exited with {self.proc.returncode}")
                time.sleep(0.02)
        raise RuntimeError(f"server did not listen on {self.port}")

    def kill(self):
        """SIGKILL: no shutdown, no save, connections reset."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture(scope="module")
def server():
    s = Server()
    yield s
    s.stop()
