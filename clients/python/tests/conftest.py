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
