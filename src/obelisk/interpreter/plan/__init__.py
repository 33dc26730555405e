"""Stage 1, the plan: JSON text in, a typed :class:`~obelisk.interpreter.plan.model.Plan` out.

Takes JSON text, UTF-8 bytes or a decoded value in one of the three plan shapes
(docs/language.md); gives a frozen ``Plan`` of ``Call`` objects whose argument
expressions and output paths are already parsed, or raises one
:class:`~obelisk.errors.PlanError` with every ``json_syntax``, ``plan_shape`` and
``reference_syntax`` diagnostic.  ``model`` holds the types, ``parse`` the parser.
"""
