"""What both fake sites serve alike: their HTML shells, static scripts, the report endpoint, the
markdown renderer and the upload endpoint.

The page-level settings (locale, input kind, logged-out state, hydration delay) are rendered into
the HTML as a JSON ``<script>`` block, read from the site's default behaviour at load time, the
way a real site's server renders per-account settings into its shell.
"""

from __future__ import annotations

import json
from importlib import resources
from urllib.parse import unquote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from bridge.fakes.behaviour import DEEP_THINK_PLACEHOLDER, Behaviour
from bridge.fakes.controller import SiteController
from bridge.fakes.render import Site, render_blocks
from bridge.fakes.streaming import Live

__all__ = [
    "RENDER_PATH",
    "REPORT_PATH",
    "STATIC_PREFIX",
    "UPLOAD_PATH",
    "common_routes",
    "not_found_response",
    "page_response",
]

STATIC_PREFIX = "/__fake/static/"
REPORT_PATH = "/__fake/report"
# The pages' markdown renderer: markdown-it-py, here on the server (bridge/fakes/render.py).
RENDER_PATH = "/__fake/render"
# The real uploads go elsewhere (Gemini: content-push.googleapis.com, SITE-FACTS G7.5; ChatGPT:
# undocumented); the fakes serve only their own hosts, so both pages upload here.
UPLOAD_PATH = "/__fake/upload"
_EVENTS = ("first_token", "text_visible", "complete")
_STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def _static_text(name: str) -> str:
    return resources.files("bridge.fakes").joinpath("static", name).read_text(encoding="utf-8")


# Cloudflare's interstitial, reduced to what the evidence names (docs/sites.md#challenge,
# SITE-FACTS C5.5): the title, the #challenge-running and #challenge-form ids, the texts; no
# app shell. Served with 403 and ``cf-mitigated: challenge``, as Cloudflare answers [C5.3].
_CHALLENGE_HTML = """<!doctype html><html lang="en-US"><head><meta charset="utf-8">
<title>Just a moment...</title></head><body>
<h1>__HOST__</h1>
<h2 id="challenge-running">Verify you are human by completing the action below.</h2>
<p>__HOST__ needs to review the security of your connection before proceeding.</p>
<form id="challenge-form" method="POST" action="/"></form>
</body></html>"""
_HOSTS = {"chatgpt": "chatgpt.com", "gemini": "gemini.google.com"}


# A project, GPT or Gem the account does not have: how the real sites answer one is not
# documented (docs/sites.md#facts-without-evidence), so the fakes answer as a web server
# answers a missing page: 404 and no app shell.
_NOT_FOUND_HTML = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>404 Not Found</title></head><body><h1>404 Not Found</h1></body></html>"""


def not_found_response() -> Response:
    """The page of a project, GPT or Gem the fake site does not know (the fake's own)."""
    return HTMLResponse(_NOT_FOUND_HTML, status_code=404, headers={"cache-control": "no-store"})


def page_response(site: str, behaviour: Behaviour) -> Response:
    """The site's HTML shell with its page-level settings rendered in (or the challenge)."""
    if behaviour.state == "challenge":
        return HTMLResponse(
            _CHALLENGE_HTML.replace("__HOST__", _HOSTS[site]),
            status_code=403,
            headers={"cache-control": "no-store", "cf-mitigated": "challenge"},
        )
    config = {
        "site": site,
        "locale": behaviour.locale,
        "inputKind": behaviour.input_kind,
        "markup": behaviour.markup,
        "sendMarkup": behaviour.send_markup,
        "loggedOut": behaviour.state == "logged_out",
        "noRequest": behaviour.state == "no_request",
        "hydrationMs": behaviour.hydration_ms,
        "modeSticks": behaviour.mode_sticks,
        "effortDisabled": behaviour.effort_disabled,
        "uploadConsent": behaviour.upload_consent,
        "temporaryChat": behaviour.temporary_chat,
        "sideNavCollapsed": behaviour.side_nav_collapsed,
        "deepThink": behaviour.deep_think,
        "deepThinkPlaceholder": DEEP_THINK_PLACEHOLDER,
        "research": behaviour.research,
    }
    # "</" inside a <script> block would end it early, whatever the JSON says.
    config_json = json.dumps(config, ensure_ascii=False).replace("</", "<\\/")
    html = (
        _static_text(f"{site}.html")
        .replace("__LANG__", behaviour.locale)
        .replace("__FAKE_CONFIG__", config_json)
    )
    return HTMLResponse(html, headers={"cache-control": "no-store"})


async def _static(request: Request) -> Response:
    name = request.path_params["name"]
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or suffix not in _STATIC_TYPES:
        return Response(status_code=404)
    try:
        text = _static_text(name)
    except FileNotFoundError:
        return Response(status_code=404)
    return Response(text, media_type=_STATIC_TYPES[suffix], headers={"cache-control": "no-store"})


def _report_endpoint(controller: SiteController) -> Route:
    async def report(request: Request) -> Response:
        """The page says when its DOM showed something (times are the page's clock)."""
        try:
            body = json.loads(await request.body())
            question_id = str(body["question_id"])
            event = body["event"]
            at = float(body["at"])
            stopped = bool(body.get("stopped", False))
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "bad report"}, status_code=400)
        if event not in _EVENTS:
            return JSONResponse({"error": f"unknown event {event!r}"}, status_code=400)
        known = controller.page_reported(question_id, event, at, stopped=stopped)
        return JSONResponse({"ok": known}, status_code=200 if known else 404)

    return Route(REPORT_PATH, report, methods=["POST"])


def _render_endpoint(controller: SiteController) -> Route:
    async def render(request: Request) -> Response:
        """``{markdown, site?, copy_code?}`` → ``{blocks}``: the HTML of each top-level block
        as the site (by default this one) shows it (:func:`~bridge.fakes.render.render_blocks`)."""
        try:
            body = json.loads(await request.body())
            markdown = body["markdown"]
            site = body.get("site") or controller.site
            copy_code = body.get("copy_code") or "Copy code"
        except (ValueError, KeyError, TypeError, AttributeError):
            return JSONResponse({"error": "bad render request"}, status_code=400)
        if site not in ("chatgpt", "gemini"):
            return JSONResponse({"error": f"unknown site {site!r}"}, status_code=400)
        if not isinstance(markdown, str) or not isinstance(copy_code, str):
            return JSONResponse({"error": "bad render request"}, status_code=400)
        # A long answer takes tens of milliseconds: off the loop that streams the answers.
        flavor: Site = "chatgpt" if site == "chatgpt" else "gemini"
        blocks = await run_in_threadpool(render_blocks, markdown, flavor, copy_code)
        return JSONResponse({"blocks": list(blocks)})

    return Route(RENDER_PATH, render, methods=["POST"])


def _upload_endpoint(controller: SiteController, live: Live | None) -> Route:
    async def upload(request: Request) -> Response:
        """A file the page uploads: its bytes as the body, its name in ``x-fake-file-name``
        (percent-encoded). Answered after the default behaviour's ``upload_ms``."""
        name = unquote(request.headers.get("x-fake-file-name", ""))
        if not name:
            return JSONResponse({"error": "x-fake-file-name missing"}, status_code=400)
        data = await request.body()
        content_type = request.headers.get("content-type", "application/octet-stream")
        delay = controller.behaviour.upload_ms / 1000
        if delay and live is not None and await live.pause(delay):
            return JSONResponse({"error": "shutting down"}, status_code=503)
        stored = controller.accept_upload(name, data, content_type)
        return JSONResponse({"id": stored.id, "name": stored.name, "size": stored.size})

    return Route(UPLOAD_PATH, upload, methods=["POST"])


def common_routes(controller: SiteController, live: Live | None = None) -> list[Route]:
    """The routes every fake site has besides its own: static scripts, the report sink, the
    markdown renderer and the upload endpoint."""
    return [
        Route(STATIC_PREFIX + "{name}", _static, methods=["GET"]),
        _report_endpoint(controller),
        _render_endpoint(controller),
        _upload_endpoint(controller, live),
    ]
