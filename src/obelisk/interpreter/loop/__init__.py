"""Stage 4, the execution loop: a model and tools in, a ``LoopResult`` out.

Each turn builds a request (``messages``, ``context``) for a ``model``, checks the
solution's calls (analysis) and runs them (runtime), in eager or lazy mode, with
``approval`` of lazy plans, ``subrequests`` for latent calls and delegates, and
``stream`` to dispatch calls while the model is still writing (docs/loop.md).
``records`` holds turns and the loop result.
"""
