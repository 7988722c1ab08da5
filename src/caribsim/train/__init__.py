"""Training: an AlphaZero-style loop over the self-play, search and arena layers
(docs/training.md).

- ``loop``: ``train(game, out_dir, rounds=...)``, rounds of batched self-play with the best
  network, training in PyTorch on a replay window, a seat-rotated evaluation match against
  the best and keep-the-best; checkpoints, resume, a JSON log per round;
- ``network``: the residual policy/value network (``evaluators.torch_mlp``): its training
  step, its checkpoints (weights and optimizer state) and its exact export as a numpy
  ``MLPEvaluator`` file the bots load without PyTorch;
- ``curve``: the learning-curve plot (losses and win share per round).

May import: the games, ``caribsim.search``, ``caribsim.human``, ``caribsim.scale`` (self-play,
arena, backends), the shared modules, PyTorch (extra ``nn``) and matplotlib (extra ``plot``);
never embed or cli.
"""
