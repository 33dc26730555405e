"""Stage 1, the tools: what a plan's ``_tool`` may name.

Takes Python functions and JSON tool descriptions (obelisk's, OpenAI's, MCP's),
with or without a function to run, and their options; gives
:class:`~obelisk.interpreter.tools.tool.Tool` objects (argument and output JSON
schemas, validation, options) collected in a
:class:`~obelisk.interpreter.tools.registry.Registry`.  ``tool`` declares a tool,
``descriptions`` reads JSON tool descriptions and matches functions to them,
``run_context`` holds ``Context`` (what a tool receives of the run's context),
``options`` holds its options (``Outcome``, ``RetryPolicy``), ``validation`` turns
schema problems into short messages, ``registry`` looks tools up by name.
"""
