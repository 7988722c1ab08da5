"""The Starlette app: the lobby and game pages and the JSON API behind them (docs/web.md).

    from caribsim.web.app import create_app
    app = create_app("games")          # uvicorn.run(app, host="127.0.0.1", port=8000)

Every refused request is answered ``{"error": "..."}`` with its status (400 bad request or
one the server's policy refuses, 403 wrong token, 404 no such game, 409 not your turn / stale
step / game over, 413 too large, 429 too many new games from one address, with Retry-After,
503 the server holds as many unfinished games as it may) and changes nothing; an error of the
server itself is a 500 with a message too, never a traceback (that goes to the server's log).

What a client may ask for is the operator's ``limits.Policy`` (``create_app(...,
policy=...)``); the bots' searches, the hints and the making of new games run on its bounded
pool of workers (``workers.Pool``), the games' slices in turn, never on the event loop.

Languages (``caribsim.human.lang``): the pages speak the server's ``lang`` unless their
address says ``?lang=cs`` / ``?lang=en``; the API answers (moves' labels, the log, the refusals)
in English unless the request says ``?lang=`` (the pages send theirs). Records stay English.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from caribsim.human import lang as languages
from caribsim.web import page
from caribsim.web.analysis import DEFAULT_ITERATIONS, Analyses
from caribsim.web.analysis import said as analysis_said
from caribsim.web.games import (
    HUMAN,
    GameError,
    Games,
    _bot,
    choices,
    hint,
    hint_said,
    prepared_bots,
)
from caribsim.web.limits import Policy, RateLimiter
from caribsim.web.workers import Pool

MAX_BODY = 64 * 1024  # bytes of a request body
MAX_DEPTH = 32  # nesting of a request body's arrays and objects (a record needs 5)
DEFAULT_BOT = "mcts:2000"
log = logging.getLogger("caribsim.web")


async def _body(request: Request):
    """The request's JSON value (GameError for a body too large, not JSON or nested deeper
    than ``MAX_DEPTH``)."""
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise GameError("the request body is larger than {n} bytes", 413, n=MAX_BODY)
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:  # json's own limit, far deeper than MAX_DEPTH
        value, deep = None, True
    except (UnicodeDecodeError, ValueError):
        raise GameError("the request body is not valid JSON (send a JSON object)") from None
    else:
        deep = _deeper(value, MAX_DEPTH)
    if deep:
        raise GameError("the request body nests arrays and objects more than {n} deep", n=MAX_DEPTH)
    return value


def _deeper(value, limit: int) -> bool:
    """Whether ``value`` nests lists and dicts more than ``limit`` deep (walked without
    recursion; a value within the limit is safe for every later recursive walk)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((x, depth + 1) for x in children)
    return False


class _JSONErrors:
    """An exception no handler took is a JSON 500 with a message, logged with its traceback
    on the server, never sent (a WebSocket's is Starlette's, which closes it)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except ClientDisconnect:  # the client left before its body came: nobody to answer
            log.info(
                "%s %s: the client disconnected", scope.get("method"), str(scope.get("path"))[:80]
            )
        except Exception:
            log.exception("%s %s failed", scope.get("method"), str(scope.get("path"))[:80])
            if started:  # too late for an answer of its own
                raise
            answer = JSONResponse(
                {"error": "the server failed to answer this request (its log says why)"},
                status_code=500,
            )
            await answer(scope, receive, send)


def _client(request: Request) -> str:
    """The address a request came from (the key of the rate limit)."""
    return request.client.host if request.client else "?"


def _lang(request, default: str = "en") -> str:
    """The language a request asks for (``?lang=``), else ``default``; GameError for one
    that is not known."""
    code = request.query_params.get("lang", default)
    if code not in languages.LANGS:
        raise GameError(
            "unknown language {lang!r}; choose from {langs}",
            lang=code[:20],
            langs=", ".join(languages.LANGS),
        )
    return code


def _said(exc: GameError, request, default: str = "en") -> str:
    """The refusal in the request's language (English when the language is what is wrong)."""
    code = request.query_params.get("lang", default)
    return exc.said(languages.translator(None, code if code in languages.LANGS else default))


# Starlette types a handler as taking any Exception; it calls each with the class it is
# registered for, which the asserts tell the type checker


def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GameError)
    retry = getattr(exc, "retry_after", None)
    headers = {"Retry-After": str(retry)} if retry is not None else None
    return JSONResponse({"error": _said(exc, request)}, status_code=exc.status, headers=headers)


def _no_route(request: Request, exc: Exception) -> Response:
    """An address or method the app does not have: under /api a JSON answer like the rest."""
    assert isinstance(exc, HTTPException)
    if not request.url.path.startswith("/api/"):
        return PlainTextResponse(exc.detail, status_code=exc.status_code)
    return JSONResponse(
        {"error": f"{exc.detail}: {request.method} {request.url.path[:80]}"},
        status_code=exc.status_code,
    )


def create_app(
    games_dir,
    bot_delay: float = 0.6,
    hint_iterations: int = 2000,
    default_bot: str = DEFAULT_BOT,
    lang: str = "en",
    analysis_iterations: int = DEFAULT_ITERATIONS,
    policy: Policy | None = None,
) -> Starlette:
    """The app over the games folder ``games_dir`` (its unfinished games resume); bots wait
    ``bot_delay`` seconds before each move, a hint searches ``hint_iterations`` iterations,
    the post-game analysis ``analysis_iterations`` simulations per decision; the pages speak
    ``lang`` (en, cs) unless their address asks for another; ``policy`` is what clients may
    ask for (default ``Policy()``; docs/web.md, "What clients may ask for")."""
    page_lang = languages.check(lang)
    policy = Policy() if policy is None else policy
    pool = Pool(policy)
    creates = RateLimiter(policy.creates_per_minute)
    games = Games(games_dir, policy=policy)
    analyses = Analyses(games.folder, analysis_iterations)

    async def page_of(request, make, of_game: bool = False):
        """An HTML page in the language of the request (``?lang=``, default the server's),
        ``make(code)`` (``of_game``: ``make(code, game)``, the game of the address), or the
        notice of a refusal."""
        try:
            code = _lang(request, page_lang)
            if not of_game:
                return HTMLResponse(make(code))
            game = await games.aget(request.path_params["game_id"])
            return HTMLResponse(make(code, game))
        except GameError as e:
            return HTMLResponse(
                page.notice(_said(e, request, page_lang), page_lang), status_code=e.status
            )

    def seats_of(game, tokens) -> list:
        return [game.seat_of(t) for t in tokens]

    async def lobby(request):
        return await page_of(request, lambda code: page.lobby(default_bot, code))

    async def game_page(request):
        return await page_of(
            request, lambda code, game: page.game(game.id, game.name, code), of_game=True
        )

    async def list_games(request):
        # a page of each list from the store (?offset=, ?limit= at most 200)
        q = request.query_params
        page = await games.alobby(q.get("offset", "0"), q.get("limit", "100"))
        return JSONResponse({**page, "choices": list(choices()), "limits": policy.public()})

    def prepare(body) -> dict:
        """A new game's bots, made on a worker (a model file is read there): spec -> bot,
        each within the policy (GameError for one that is not)."""
        seats = body.get("seats") if isinstance(body, dict) else None
        made: dict = {}
        for s, spec in enumerate(seats if isinstance(seats, list) else ()):
            if spec != HUMAN and spec not in made:
                made[spec] = _bot(spec, s)
                policy.check_bot(made[spec], s)
        return made

    async def create(request):
        client = _client(request)
        creates.refuse(client)  # before the body is read: a flood costs nothing
        if await games.acount(False) >= policy.max_games:
            raise GameError(
                "this server holds {n} unfinished games, as many as it may; try again when "
                "some have ended",
                503,
                n=policy.max_games,
            )
        body = policy.check_create(await _body(request))
        bots = await pool.submit(("create", client), functools.partial(prepare, body))
        with prepared_bots(bots):  # the game is made here, its bots copied; stored on io
            game = await games.acreate(body)
        game.kick(bot_delay, pool)
        links = [
            {"seat": s, "url": f"/game/{game.id}?token={t}"} for s, t in enumerate(game.tokens) if t
        ]
        hotseat = (
            (f"/game/{game.id}?" + "&".join(f"token={t}" for t in game.tokens if t))
            if len(links) > 1
            else None
        )
        return JSONResponse(
            {"id": game.id, "links": links, "hotseat": hotseat, "watch": f"/game/{game.id}"},
            status_code=201,
        )

    async def view(request):
        code = _lang(request)
        game = await games.aget(request.path_params["game_id"])
        return JSONResponse(game.view(seats_of(game, request.query_params.getlist("token")), code))

    def acting(method):
        async def handler(request):
            code = _lang(request)
            game, body = await games.aget(request.path_params["game_id"]), await _body(request)
            await game.act(method, body)  # answered once stored
            game.kick(bot_delay, pool)
            return JSONResponse(game.view([game.seat_of(body["token"])], code))

        return handler

    async def hint_route(request):
        code = _lang(request)
        game, body = await games.aget(request.path_params["game_id"]), await _body(request)
        state = game.hint_request(body)
        # one search per step, however often it is asked for
        task = game.hints.get(game.step)
        if task is None:  # on the pool, in turn with the game's bot and the other games
            task = game.hints[game.step] = pool.submit(
                game.id, functools.partial(hint, state, hint_iterations, game.board)
            )
        found = await asyncio.shield(task)
        return JSONResponse(hint_said(found, languages.translator(game.name, code)))

    async def record(request):
        game = await games.aget(request.path_params["game_id"])
        return JSONResponse(game.finished_record())

    async def analysis(request):
        code = _lang(request)
        game = await games.aget(request.path_params["game_id"])
        return JSONResponse(
            analysis_said(analyses.answer(game), languages.translator(game.name, code))
        )

    async def replay(request):
        return await page_of(
            request,
            lambda code, game: page.replay(game.finished_record(), game.id, default_bot, code),
            of_game=True,
        )

    async def updates(ws: WebSocket):
        await ws.accept()
        try:
            code = _lang(ws)
            game = await games.aget(ws.path_params["game_id"])
            seats = seats_of(game, ws.query_params.getlist("token"))
        except GameError as e:
            await ws.send_json({"error": _said(e, ws), "status": e.status})
            await ws.close(code=4000 + e.status)
            return
        changed: asyncio.Queue[None] = asyncio.Queue()  # a None after every change
        game.listeners.add(changed)
        try:
            await _serve_socket(ws, lambda: game.view(seats, code), changed)
        finally:
            game.listeners.discard(changed)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        for game in games.live_bot_games():
            game.kick(bot_delay, pool)  # a bot to act when the server stopped moves now
        yield
        for game in games.games.values():
            if game.task is not None:
                game.task.cancel()
        pool.close()
        analyses.close()
        games.close()

    api = "/api/games/{game_id}"
    app = Starlette(
        routes=[
            Route("/", lobby),
            Route("/game/{game_id}", game_page),
            Route("/replay/{game_id}", replay),
            Route("/api/games", list_games),
            Route("/api/games", create, methods=["POST"]),
            Route(api, view),
            Route(api + "/move", acting("move"), methods=["POST"]),
            Route(api + "/undo", acting("undo"), methods=["POST"]),
            Route(api + "/hint", hint_route, methods=["POST"]),
            Route(api + "/record", record),
            Route(api + "/analysis", analysis),
            WebSocketRoute(api + "/ws", updates),
        ],
        exception_handlers={GameError: _refused, HTTPException: _no_route},
        middleware=[Middleware(_JSONErrors)],
        lifespan=lifespan,
    )
    app.state.games = games
    app.state.policy = policy
    app.state.pool = pool
    app.state.analyses = analyses
    return app


async def _serve_socket(ws: WebSocket, view, changed: asyncio.Queue) -> None:
    """Send the view now and after every change until the page goes away; the socket takes
    no requests (moves are posted), a message gets an error answer."""

    async def push():
        while True:
            await ws.send_json(view())
            await changed.get()

    async def listen():
        while (await ws.receive())["type"] != "websocket.disconnect":
            await ws.send_json(
                {
                    "error": "this socket only sends the game's updates; post moves "
                    "to /api/games/ID/move",
                    "status": 400,
                }
            )

    tasks = [asyncio.ensure_future(push()), asyncio.ensure_future(listen())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
        with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, RuntimeError):
            await asyncio.gather(*tasks)
