"""caribsim inside other frameworks.

- ``envs``: PettingZoo AEC and Gymnasium single-agent environments (registered as
  ``caribsim/PuertoRico-v0``, ...);
- ``vector_env``: the Gymnasium vector environment over VectorGame;
- ``vector``: ``VectorGame`` over ``_vector`` (compiled, ``pyx/caribsim/embed/_vector.pyx``):
  n games of one kind in one C array, stepped with one call;
- ``openspiel``: the games registered with OpenSpiel (``pyspiel.load_game("caribsim_...")``);
- ``infostate``: perfect-recall information states from the events each seat saw.

May import: the games, ``caribsim.search`` (bots as opponents), the shared modules and the
optional frameworks (gymnasium, pettingzoo, pyspiel) of its extras; never human, scale or cli.
"""
