"""Search and players: everything that chooses moves.

- ``mcts``: the search API (``search``, ``Searcher``, ISMCTS for hidden information,
  root-parallel threads) over ``_mcts`` (compiled, ``pyx/caribsim/search/_mcts.pyx``: the
  node pool and the nogil iterations over any game's C table);
- ``guided``: search guided by a learned model (PUCT or a Gumbel root, priors and values
  from an evaluator, many games' trees evaluated in one batched call) over ``_guided``
  (compiled, ``pyx/caribsim/search/_guided.pyx``);
- ``evaluators``: leaf evaluators for the guided search (a numpy MLP and its training,
  a PyTorch adapter, an LRU cache, the protocol's checks);
- ``bots``: RandomBot, GreedyBot, MCTSBot, AlphaZeroBot (the guided search as a bot) and
  the bot spec strings (``mcts:1000``, ``puct:200``, ``alphazero:200:model=net.npz``).

May import: the games (through ``caribsim.load_game`` and the C game interface) and the
shared modules; never human, embed, scale or cli, which build on it.
"""
