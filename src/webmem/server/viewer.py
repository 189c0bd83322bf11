"""The viewer: one read-only page at ``/`` that reads the API (no build step, nothing from a CDN)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"


def mount_viewer(app: FastAPI) -> None:
    @app.get("/", include_in_schema=False)
    def viewer() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
