"""Stage 1, the tools: what a plan's ``_tool`` may name.

Takes Python functions, latent JSON tool descriptions and their options; gives
:class:`~obelisk.interpreter.tools.tool.Tool` objects (argument and output JSON
schemas, validation, options) collected in a
:class:`~obelisk.interpreter.tools.registry.Registry`.  ``tool`` declares a tool,
``options`` holds its options (``Outcome``, ``RetryPolicy``), ``validation`` turns
schema problems into short messages, ``registry`` looks tools up by name.
"""
