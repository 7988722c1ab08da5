"""Play in the browser: ``python -m caribsim serve`` (docs/web.md).

- ``games``: the games a server holds (state, seats and their tokens, bots, the move log, each
  step stored as the game goes, the bounded cache of loaded games) and the checks every
  request goes through;
- ``store``: where the games are kept: the ``Store`` interface and ``SQLiteStore`` (one file,
  a row per step, committed before the answer), the import of a folder of record files;
- ``app``: the Starlette app, its pages, the JSON API and the live updates (WebSocket);
- ``analysis``: the post-game analysis (each seat's win estimate per decision from a search,
  the biggest swings), searched on a thread of its own and kept beside the record;
- ``limits``: what clients may ask for (the operator's ``Policy``: bot kinds, budgets, model
  files, data folders, the games' number, creates per client) and its checks;
- ``workers``: the bounded pool of threads that runs the bots' searches and the hints, the
  games' slices in turn;
- ``page``: the HTML and JS of the lobby and of the game page (the board drawn by the replay
  viewer's board modules).

Needs the extra ``web`` (starlette, uvicorn, websockets): pip install 'caribsim[web]'.
May import: the games, ``caribsim.search`` (bots, hints), ``caribsim.human`` (boards, records,
the viewer's page parts), ``caribsim.scale`` and the shared modules; never embed, train or cli.
"""
