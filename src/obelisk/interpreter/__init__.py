"""The interpreter layer: plan model, tools, dependency analysis (DESIGN §3)."""
