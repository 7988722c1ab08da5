"""Human play and game records.

- ``records``: the JSON game record (options, seed, every step with its name) and replay;
- ``play``: ``caribsim play``, a game against bots at the terminal (undo, hint, save);
- ``viewer``: the self-contained HTML replay viewer of a record;
- ``boards``: how each game is drawn (one module per game), for the viewer and the browser;
- ``lang``: the language of what a person reads (English, Czech from ``data/lang_cs.csv``).

May import: the games, ``caribsim.search`` (the bots and hints), the shared modules; never
embed, scale or cli.
"""
