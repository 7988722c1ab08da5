"""Many games at once.

- ``simulation``: ``caribsim.simulate``, random playouts in C or bot games, with statistics;
- ``arena``: seat-rotated matches between bots, win rates with their intervals;
- ``tournament``: a pool of more bots than seats on a round-robin or balanced random seat
  schedule, openskill Plackett-Luce ratings (extra ``rating``), pairwise win shares;
- ``distributed``: chunks of games on the local, processes or Ray backends, with resume
  and retries (results do not depend on the backend);
- ``selfplay``: self-play games written as training shards (observations, masks, search
  policies, returns), one game at a time or many through one batched guided search.

May import: the games, ``caribsim.search`` (bots), ``caribsim.human.records`` (saved games),
the shared modules, Ray (extra ``ray``), openskill (extra ``rating``) and matplotlib (extra
``plot``); never embed or cli.
"""
