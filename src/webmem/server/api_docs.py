"""The API's docs at ``/docs`` (Swagger UI) from assets installed with the server (the ``fastapi-offline``
package ships them): they render offline, and the browser asks no other host. No ReDoc page: its sidebar
loads Redocly's logo from their CDN, whatever it is configured with."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/static/api-docs"
# Swagger UI would show a badge fetched from validator.swagger.io; null turns it off.
SWAGGER_PARAMETERS = {"validatorUrl": None}


def assets_directory() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


def mount_api_docs(app: FastAPI) -> None:
    """``/docs`` for an app made with ``docs_url=None``."""
    app.mount(ASSETS_URL, StaticFiles(directory=assets_directory()), name="api-docs")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} API",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters={**(app.swagger_ui_parameters or {}), **SWAGGER_PARAMETERS})
