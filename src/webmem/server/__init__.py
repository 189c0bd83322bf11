"""webmem as an HTTP service (``webmem serve``, extra ``webmem[server]``): the service layer's operations
under ``/v1``, for agents in other languages and fleets that share one memory."""

from .app import create_app

__all__ = ["create_app"]
