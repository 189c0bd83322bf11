"""One memory per namespace, opened on first use from the server's location and options."""

from __future__ import annotations

import threading
from typing import Any

from ..core.models import Namespace, validated_value
from ..memory import Memory
from ..service import MemoryService

NAMESPACE_HEADER = "X-Webmem-Namespace"
DEFAULT_NAMESPACE = "default"


class Namespaces:
    """The service of each namespace, opened once and shared by the requests that name it."""

    def __init__(self, location: str | None, **options: Any) -> None:
        self.location = location
        self.options = options
        self._services: dict[str, MemoryService] = {}
        self._lock = threading.Lock()

    def service(self, namespace: str | None) -> MemoryService:
        name = validated_value(Namespace, namespace or DEFAULT_NAMESPACE, field=NAMESPACE_HEADER)
        with self._lock:
            found = self._services.get(name)
            if found is None:
                found = MemoryService(Memory.open(self.location, namespace=name, **self.options))
                self._services[name] = found
            return found

    def close(self) -> None:
        with self._lock:
            for service in self._services.values():
                service.close()
            self._services.clear()
