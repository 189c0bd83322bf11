"""A throwaway PostgreSQL cluster for the test suite (or the server named by WEBMEM_TEST_POSTGRES_URL).

The cluster is initialised in a temporary directory and listens on 127.0.0.1 on a free port; as
root, initdb and pg_ctl run as the ``postgres`` system user. Tests connect as ``webmem``, a role
that is not a superuser, so row-level security applies to it.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HOW_TO_GET_ONE = (
    "PostgreSQL is needed for the tests of the PostgreSQL backend: install Debian's server "
    "(apt-get install -y postgresql, which `make test` does as root) or point "
    "WEBMEM_TEST_POSTGRES_URL at a server where you may create databases."
)


@dataclass
class Cluster:
    admin_url: str  # a superuser connection to the maintenance database
    user_url: str  # the non-superuser role the tests use, without a database name
    directory: Path | None = None

    def stop(self) -> None:
        if self.directory is None:
            return
        _as_postgres([_binary("pg_ctl"), "-D", str(self.directory / "data"), "-m", "immediate", "stop"], check=False)
        shutil.rmtree(self.directory, ignore_errors=True)


def start() -> Cluster:
    given = os.environ.get("WEBMEM_TEST_POSTGRES_URL")
    if given:
        return Cluster(admin_url=given, user_url=given.rsplit("/", 1)[0] + "/")
    if _binary("initdb") is None:
        raise RuntimeError(HOW_TO_GET_ONE)
    directory = Path(tempfile.mkdtemp(prefix="webmem-pg-"))
    os.chmod(directory, 0o755)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    port = _free_port()
    data = directory / "data"
    _as_postgres([_binary("initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"])
    options = (f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
               "-c full_page_writes=off -c max_connections=200")
    _as_postgres([_binary("pg_ctl"), "-D", str(data), "-o", options, "-l", str(directory / "server.log"), "-w", "start"])
    admin = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    _sql(admin, "CREATE ROLE webmem LOGIN CREATEDB")
    return Cluster(admin_url=admin, user_url=f"postgresql://webmem@127.0.0.1:{port}/", directory=directory)


def create_database(cluster: Cluster, name: str) -> str:
    _sql(cluster.admin_url, f'CREATE DATABASE "{name}" OWNER webmem')
    return cluster.user_url + name


def drop_database(cluster: Cluster, name: str) -> None:
    _sql(cluster.admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _sql(url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


def _binary(name: str) -> str | None:
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else shutil.which(name)


def _as_postgres(command: list[str | None], *, check: bool = True) -> None:
    argv = [str(part) for part in command]
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "postgres", "--", *argv]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {result.stderr.strip()[-2000:]}\n{HOW_TO_GET_ONE}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
